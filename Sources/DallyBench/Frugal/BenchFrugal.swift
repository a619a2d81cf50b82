import ArgumentParser
import DallyFrugal
import Foundation

/// `dally-bench frugal`: the frugality benchmark. One simulated hour of a seeded trace (50
/// devices' telemetry, status rows, orders with hot updates, photos with their images; see
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
    @Flag(help: "Leave the photos' images out: the rows-only trace the codec was measured on.") var noImages = false

    func run() async throws {
        let patterns: [WifiPattern] =
            switch wifi {
            case "both": [.always, .partial]
            case "always": [.always]
            case "partial": [.partial]
            default: throw ValidationError("--wifi takes partial, always or both")
            }
        for pattern in patterns {
            let trace = FrugalTrace.generate(seed: seed, clients: clients, wifi: pattern, images: !noImages)
            let root = try BenchOutput.temporaryDirectory("dally-frugal")
            defer { try? FileManager.default.removeItem(atPath: root) }
            let objects = trace.storedObjects
            print("== wifi \(pattern.rawValue): \(trace.writes.count) writes by \(trace.clients) clients in \(trace.duration / 60_000) min, \(objects.count) photo objects (\(FrugalReport.grouped(objects.reduce(0) { $0 + $1.size })) bytes); wifi up \(trace.wifiUp.map { "\($0.lowerBound / 60_000)–\($0.upperBound / 60_000) min" }.joined(separator: ", "))")
            let hashes = FrugalObjectHashes(trace: trace)
            var outcomes: [FrugalOutcome] = []
            outcomes.append(
                try await FrugalDallyRun(
                    trace: trace, hashes: hashes, root: root + "/dally", dictionaryBytes: dictionaryBytes, level: level
                ).run())
            if compareDictionaries {
                var plain = try await FrugalDallyRun(
                    trace: trace, hashes: hashes, root: root + "/plain", dictionaryBytes: 0, level: level
                ).run()
                plain.name = "dally, no dict"
                outcomes.append(plain)
            }
            if !dallyOnly {
                outcomes.append(
                    try await FrugalBaselineRun(kind: .naive, trace: trace, hashes: hashes, root: root + "/naive").run())
                outcomes.append(
                    try await FrugalBaselineRun(kind: .periodic, trace: trace, hashes: hashes, root: root + "/periodic")
                        .run())
            }
            let floors = try FrugalFloors(trace: trace, allClassesUp: pattern == .always)
            print(FrugalSummary(outcomes: outcomes, floors: floors, trace: trace).render())
        }
    }
}
