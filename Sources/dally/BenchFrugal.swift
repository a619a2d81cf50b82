import ArgumentParser
import DallyFrugal
import Foundation

/// `dally bench frugal`: the frugality benchmark. One simulated hour of a seeded trace (50
/// devices' telemetry, status rows, orders with hot updates, photo metadata; see
/// ``FrugalTrace``) through a real gateway and a real cloud on loopback, on a manual clock;
/// the same trace sent naively and periodically to the same cloud; every byte counted at the
/// socket by relays between sender and cloud; wake-ups and energy from an LTE radio model; the
/// floors (fewest wake-ups the deadlines allow, zstd -19 of the final data).
struct BenchFrugal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frugal",
        abstract: "Replay a seeded hour of writes through Dally, naive and periodic sync; count bytes and wake-ups.")

    @Option(help: "The trace's seed.") var seed: UInt64 = 1
    @Option(help: "Local clients (devices).") var clients = 50
    @Option(help: "Wifi schedule: partial (up part of the hour), always, or both (two runs).") var wifi = "both"
    @Option(help: "Dally's dictionary size per table in bytes (0: no dictionaries).") var dictionaryBytes = 4_096
    @Option(help: "Dally's zstd level.") var level = 3
    @Flag(help: "Run Dally only, without the naive and periodic baselines.") var dallyOnly = false
    @Flag(help: "Also run Dally without dictionaries, to show what they save.") var compareDictionaries = false

    func run() async throws {
        let patterns: [WifiPattern] =
            switch wifi {
            case "both": [.always, .partial]
            case "always": [.always]
            case "partial": [.partial]
            default: throw ValidationError("--wifi takes partial, always or both")
            }
        for pattern in patterns {
            let trace = FrugalTrace.generate(seed: seed, clients: clients, wifi: pattern)
            let root = try BenchOutput.temporaryDirectory("dally-frugal")
            defer { try? FileManager.default.removeItem(atPath: root) }
            print("== wifi \(pattern.rawValue): \(trace.writes.count) writes by \(trace.clients) clients in \(trace.duration / 60_000) min; wifi up \(trace.wifiUp.map { "\($0.lowerBound / 60_000)–\($0.upperBound / 60_000) min" }.joined(separator: ", "))")
            var outcomes: [FrugalOutcome] = []
            outcomes.append(
                try await FrugalDallyRun(trace: trace, root: root + "/dally", dictionaryBytes: dictionaryBytes, level: level)
                    .run())
            if compareDictionaries {
                var plain = try await FrugalDallyRun(trace: trace, root: root + "/plain", dictionaryBytes: 0, level: level).run()
                plain.name = "dally, no dict"
                outcomes.append(plain)
            }
            if !dallyOnly {
                outcomes.append(try await FrugalBaselineRun(kind: .naive, trace: trace, root: root + "/naive").run())
                outcomes.append(try await FrugalBaselineRun(kind: .periodic, trace: trace, root: root + "/periodic").run())
            }
            let floors = try FrugalFloors(trace: trace, allClassesUp: pattern == .always)
            print(FrugalSummary(outcomes: outcomes, floors: floors, trace: trace).render())
        }
    }
}

/// The floors the benchmark compares with.
struct FrugalFloors {
    let wakeUps: Int
    let rawBytes: Int
    let zstd19Bytes: Int
    /// The row states the deadlines oblige a sender to move (see ``ObligedDataFloor``).
    let obliged: (states: Int, raw: Int, compressed: Int)

    init(trace: FrugalTrace, allClassesUp: Bool) throws {
        wakeUps = WakeFloor.minimumWakeUps(trace: trace, allClassesUp: allClassesUp)
        let sizes = try FinalDataFloor.zstd19Bytes(
            of: trace.finalRows(), tables: trace.tables, epochMillis: FrugalTrace.epochMillis)
        (rawBytes, zstd19Bytes) = (sizes.raw, sizes.compressed)
        obliged = try ObligedDataFloor.zstd19Bytes(trace: trace)
    }
}
