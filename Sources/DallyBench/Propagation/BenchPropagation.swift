import DallyLogging
import ArgumentParser
import Foundation

/// `dally-bench propagation`: how long a row written on gateway A takes to reach a client
/// long-polling gateway B, with a cloud and both gateways in this process on 127.0.0.1.
///
/// Each sample opens `GET /v1/tables/orders/changes?since=<cursor>&wait=<wait>` on B, then
/// `PUT`s a new row on A and asks A to sync now (`POST /v1/tables/orders/sync`), and times from
/// just before the PUT until B's long-poll answers with the row. On the way: A's batch to the
/// cloud, the cloud's notify long-poll answering B's syncer, B's pull, B's change hub. The
/// gateways sync only when asked or told (`sync_interval` is an hour).
struct BenchPropagation: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "propagation",
        abstract: "Measure row propagation gateway A -> cloud -> gateway B long-poll, and the sync-now round trip."
    )

    @Option(name: .long, help: "Samples measured.")
    var samples = 500

    @Option(name: .long, help: "Samples run first and not counted (connections, caches, B's notify poll).")
    var warmup = 20

    @Option(name: .long, help: "The long-poll's ?wait= on gateway B, in seconds.")
    var wait = 30

    @Option(name: .long, help: "SQLite synchronous mode of the cloud and the gateways: full (the default) or normal.")
    var synchronous = "full"

    @Option(name: .long, help: "Log level of the servers (to standard error).")
    var logLevel = "error"

    @Flag(name: .long, help: "Keep the temporary data directories.")
    var keep = false

    func validate() throws {
        guard samples >= 1 else { throw ValidationError("--samples: at least 1") }
        guard warmup >= 0 else { throw ValidationError("--warmup: 0 or more") }
        guard (1...120).contains(wait) else { throw ValidationError("--wait: 1 to 120 seconds") }
        guard ["full", "normal"].contains(synchronous) else { throw ValidationError("--synchronous: full or normal") }
    }

    func run() async throws {
        LogOutput.bootstrap(level: logLevel)
        let root = try BenchOutput.temporaryDirectory("propagation")
        print(
            """
            dally-bench propagation: \(samples) samples (+\(warmup) warm-up), cloud + 2 gateways in one process on \
            127.0.0.1, synchronous=\(synchronous), \(ProcessInfo.processInfo.activeProcessorCount) cores
            data under \(root)
            """)
        let figures = try await BenchOutput.measured(
            in: root, keep: keep,
            start: {
                try await PropagationSystem.start(
                    root: root, synchronousFull: synchronous == "full", logLevel: logLevel)
            },
            measure: { try await $0.measure(samples: samples, warmup: warmup, wait: wait) }, stop: { try await $0.stop() })
        report(figures)
    }

    private func report(_ figures: PropagationFigures) {
        let measures: [(String, String, Samples)] = [
            ("propagation", "PUT on A -> B's long-poll answers", figures.endToEnd),
            ("propagation_sync_now", "sync-now round trip on A", figures.syncNow),
            ("propagation_put", "PUT round trip on A", figures.put),
        ]
        var rows = [["measure", "p50 ms", "p90 ms", "p99 ms", "max ms"]]
        for (_, label, samples) in measures {
            let values = [50, 90, 99].map { samples.percentile($0) } + [samples.max]
            rows.append([label] + values.map(BenchOutput.figure))
        }
        print("")
        BenchOutput.table(rows)
        let early = figures.beforeSyncReturned
        print("long-polls that answered before the sync-now returned: \(early) of \(figures.endToEnd.count)")
        print("")
        for (name, _, samples) in measures {
            let fields = BenchOutput.percentileFields(samples, [50, 90, 99]) + [("samples", String(samples.count))]
            print(BenchOutput.resultLine(name, fields))
        }
    }
}
