import ArgumentParser
import DallyLogging
import Foundation

/// `dally-bench scope`: what a sync scope saves. A cloud holds `--stores` stores of
/// `--rows-per-store` rows each in `shop_orders` (`store_id` a scope column); then, on the same
/// data:
///
/// 1. the cloud's page query time: every page of the table read from the store, unscoped and
///    scoped to one store (through the scope index);
/// 2. a fresh gateway pulls the table once unscoped and once scoped to one store (sync-now
///    until nothing more waits): wall time, rows held, and the answer bytes it received.
///
/// A gateway scoped to 1 of 100 stores should receive about 1% of the bytes.
struct BenchScope: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scope",
        abstract: "Measure downstream bytes and pull time of a gateway scoped to one store vs unscoped, and the scoped page query."
    )

    @Option(name: .long, help: "Stores in the table.")
    var stores = 100

    @Option(name: .long, help: "Rows per store.")
    var rowsPerStore = 10_000

    @Option(name: .long, help: "Rows per seeding batch.")
    var batchRows = 5_000

    @Option(name: .long, help: "Log level of the servers (to standard error).")
    var logLevel = "error"

    @Flag(name: .long, help: "Keep the temporary data directories.")
    var keep = false

    func validate() throws {
        guard stores >= 1, stores <= 100_000 else { throw ValidationError("--stores: 1 to 100000") }
        guard rowsPerStore >= 1 else { throw ValidationError("--rows-per-store: at least 1") }
        guard (1...10_000).contains(batchRows) else { throw ValidationError("--batch-rows: 1 to 10000") }
    }

    func run() async throws {
        LogOutput.bootstrap(level: logLevel)
        let root = try BenchOutput.temporaryDirectory("scope")
        print(
            """
            dally-bench scope: \(stores) stores × \(rowsPerStore) rows, cloud + gateways in one process on 127.0.0.1, \
            \(ProcessInfo.processInfo.activeProcessorCount) cores
            data under \(root)
            """)
        let figures = try await BenchOutput.measured(
            in: root, keep: keep, start: { try await ScopeBenchSystem.start(root: root, logLevel: logLevel) },
            measure: { system in
                try await system.seed(stores: stores, rowsPerStore: rowsPerStore, batchRows: batchRows)
                return try await system.measure(store: ScopeBenchSystem.storeName(0))
            },
            stop: { try await $0.stop() })
        for line in figures.lines { print(line) }
    }
}

/// What one run measured.
struct ScopeFigures {
    struct Pull {
        var rows: Int
        var bytes: Int64
        var time: Duration
    }

    var queryAll: (rows: Int, time: Duration)
    var queryScoped: (rows: Int, time: Duration)
    var unscoped: Pull
    var scoped: Pull

    var lines: [String] {
        let share = unscoped.bytes > 0 ? Double(scoped.bytes) / Double(unscoped.bytes) * 100 : 0
        return [
            "cloud page query (pages of 1000, SQLite store)",
            "  unscoped:          \(queryAll.rows) rows in \(ms(queryAll.time)) ms",
            "  scoped, 1 store:   \(queryScoped.rows) rows in \(ms(queryScoped.time)) ms",
            "gateway pull (sync-now until nothing more waits)",
            "  unscoped:          \(unscoped.rows) rows, \(unscoped.bytes) bytes received, \(ms(unscoped.time)) ms",
            "  scoped, 1 store:   \(scoped.rows) rows, \(scoped.bytes) bytes received, \(ms(scoped.time)) ms",
            "  scoped / unscoped: \(String(format: "%.2f", share))% of the bytes",
        ]
    }

    private func ms(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
    }
}
