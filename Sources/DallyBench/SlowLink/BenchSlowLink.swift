import ArgumentParser
import DallyFrugal
import DallyTestSupport
import Foundation

/// `dally-bench slowlink`: objects and a wide-row backlog over shaped links (a relay that
/// shares one bandwidth among all connections and both directions, with a round trip added),
/// clean and cut half-way, against the ideal time (bytes ÷ bandwidth) and the bytes of the
/// clean transfer. The gateway runs on the shipped defaults (`request_timeout` 30 s included).
struct BenchSlowLink: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slowlink",
        abstract: "Objects and a wide-row backlog over slow, long links: time vs ideal, bytes vs a clean transfer."
    )

    @Option(help: "Link rates in bytes per second, comma-separated.") var rates = "2000,16000,128000"
    @Option(help: "Round trip added by the link, in ms.") var roundTripMs = 600
    @Option(help: "How long a new connection waits before its first byte moves, in ms (a handshake's round trip).")
    var setupMs = 0
    @Option(help: "Object sizes in MiB, comma-separated (0.5 allowed).") var objectsMib = "0.5,3,20"
    @Option(help: "Rows in the wide-row backlog (0: none).") var rows = 20_000
    @Option(help: "Bytes of notes per row (hex text).") var noteBytes = 200
    @Option(help: "Skip a case whose ideal time passes this many seconds.") var maxIdealSeconds = 900.0
    @Flag(help: "Also run each case cut half-way.") var cut = false
    @Option(help: "Server log level.") var logLevel = "error"

    func run() async throws {
        let rates = rates.split(separator: ",").compactMap { Int($0) }
        let sizes = objectsMib.split(separator: ",").compactMap { Double($0) }.map { Int($0 * 1_048_576) }
        print("slow links: round trip \(roundTripMs) ms, connection set-up \(setupMs) ms, bandwidth shared by all connections and both directions (build with -c release for figures)\n")
        var table = [["link B/s", "case", "seconds", "× ideal", "at cloud s", "× ideal", "bytes up", "× clean", "failures", "wasted", "resumed", "measured B/s", "requests"]]
        for rate in rates {
            let shape = LinkShape(bytesPerSecond: rate, roundTrip: .milliseconds(roundTripMs), setUp: .milliseconds(setupMs))
            for size in sizes {
                let ideal = Double(size) / Double(rate)
                guard ideal <= maxIdealSeconds else {
                    table.append(["\(rate)", "object \(Self.mib(size))", "skipped: ideal \(Int(ideal)) s", "", "", "", "", "", "", "", "", "", ""])
                    continue
                }
                let clean = try await Self.run(shape: shape, logLevel: logLevel) { try await $0.object(SyntheticObject(size: size, seed: 5), cut: false) }
                table.append(Self.row(rate, "object \(Self.mib(size))", clean, ideal: ideal, clean: clean))
                if cut {
                    let cutOutcome = try await Self.run(shape: shape, logLevel: logLevel) { try await $0.object(SyntheticObject(size: size, seed: 5), cut: true) }
                    table.append(Self.row(rate, "object \(Self.mib(size)) cut", cutOutcome, ideal: ideal, clean: clean))
                }
            }
            guard rows > 0 else { continue }
            let clean = try await Self.run(shape: shape, logLevel: logLevel) { try await $0.rows(rows, noteBytes: noteBytes, cut: false) }
            // The rows' ideal: the bytes the clean run moved up (compressed batches) ÷ rate.
            let ideal = Double(clean.bytesUp + clean.bytesDown) / Double(rate)
            table.append(Self.row(rate, "\(rows) rows", clean, ideal: ideal, clean: clean))
            if cut {
                let cutOutcome = try await Self.run(shape: shape, logLevel: logLevel) { try await $0.rows(rows, noteBytes: noteBytes, cut: true) }
                table.append(Self.row(rate, "\(rows) rows cut", cutOutcome, ideal: ideal, clean: clean))
            }
        }
        BenchOutput.table(table)
        print("\n× ideal: objects against size ÷ rate; rows against the clean run's link bytes ÷ rate.")
        print("seconds: until the gateway counted it sent; at cloud s: until the cloud held it all (asked on loopback).")
        print("× clean: bytes up against the clean run's. wasted/resumed: the uplink's counters.")
        print("requests: HTTP requests over the link (each costs at least a round trip unless another overlaps it).")
    }

    static func run(
        shape: LinkShape, logLevel: String, _ body: (SlowLinkRun) async throws -> SlowLinkRun.Outcome
    ) async throws -> SlowLinkRun.Outcome {
        let run = try await SlowLinkRun.start(shape: shape, logLevel: logLevel)
        do {
            let outcome = try await body(run)
            await run.stop()
            return outcome
        } catch {
            await run.stop()
            throw error
        }
    }

    static func row(_ rate: Int, _ name: String, _ outcome: SlowLinkRun.Outcome, ideal: Double, clean: SlowLinkRun.Outcome)
        -> [String]
    {
        [
            "\(rate)", name, BenchOutput.figure(outcome.seconds), String(format: "%.3f", outcome.seconds / ideal),
            outcome.atCloudSeconds.map { BenchOutput.figure($0) } ?? "-",
            outcome.atCloudSeconds.map { String(format: "%.3f", $0 / ideal) } ?? "-",
            "\(outcome.bytesUp)", String(format: "%.3f", Double(outcome.bytesUp) / Double(max(clean.bytesUp, 1))),
            "\(outcome.failures)", "\(outcome.wastedBytes)", "\(outcome.resumedBytes)",
            outcome.measuredUp.map { BenchOutput.figure($0) } ?? "-", "\(outcome.requests)",
        ]
    }

    static func mib(_ bytes: Int) -> String {
        bytes % 1_048_576 == 0 ? "\(bytes / 1_048_576) MiB" : String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}
