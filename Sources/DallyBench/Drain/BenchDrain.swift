import ArgumentParser
import DallyCore
import DallyLogging
import DallyStore
import DallySync
import Foundation

/// `dally-bench drain`: the gateway's own share of draining a backlog, in one process, with
/// no cloud and no HTTP: what each row costs the replica to be sent and settled.
///
/// A fresh replica takes `--rows` local writes (batch requests of `--write-rows`, as a client
/// writes a backlog while the cloud is away); then batches of `--rows-per-batch` are built
/// and recorded in flight (`ReplicaStore.nextBatch`) and answered, every row accepted as a
/// fresh cloud would (`ReplicaStore.applyAnswer`), one after the other until the outbox is
/// empty. The two steps are timed apart, in wall time and in this process's CPU time; the
/// answers are built between them, off the clock.
///
/// `tools/bench/backlog.sh` measures the whole drain against a real cloud; on a box where
/// gateway and cloud share the cores, the gateway's CPU per row measured here is what bounds
/// it (docs/BENCHMARKS.md, "A long outage's backlog").
struct BenchDrain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain",
        abstract: "Measure the gateway replica's cost per row of a drain: batches built, recorded and settled (no cloud)."
    )

    @Option(name: .long, help: "Rows written while the cloud is away.")
    var rows = 100_000

    @Option(name: .long, help: "Rows per local batch request while writing.")
    var writeRows = 5_000

    @Option(name: .long, help: "Rows per batch sent (the gateway's max_batch_rows).")
    var rowsPerBatch = 5_000

    @Option(name: .long, help: "Columns of the bench table, comma-separated \"name TYPE\" (no OBJECT).")
    var columns = "name TEXT,qty INTEGER,price REAL,paid BOOLEAN"

    @Option(name: .long, help: "New row ids: uuid (random, v4-like) or ordered (time-ordered, v7-like).")
    var ids = BenchIDs.uuid

    @Option(name: .long, help: "SQLite synchronous mode: full (the default config) or normal.")
    var synchronous = "full"

    @Flag(name: .long, help: "Keep the temporary data directory.")
    var keep = false

    func validate() throws {
        guard rows >= 1 else { throw ValidationError("--rows: at least 1") }
        guard writeRows >= 1, rowsPerBatch >= 1 else { throw ValidationError("--write-rows, --rows-per-batch: at least 1") }
        guard ["full", "normal"].contains(synchronous) else { throw ValidationError("--synchronous: full or normal") }
    }

    func run() async throws {
        LogOutput.bootstrap(level: "error")
        let declarations = try BenchConfigs.columns(columns)
        let root = try BenchOutput.temporaryDirectory("drain")
        defer { if keep { print("kept \(root)") } else { try? FileManager.default.removeItem(atPath: root) } }
        // The table as a gateway reads it from its configuration (checks the declarations); the
        // cloud it names is never contacted.
        let config = try BenchConfigs.gateway(
            0, directory: root + "/gateway", cloudPort: 9, columns: declarations, synchronousFull: synchronous == "full",
            logLevel: "error")
        guard let schema = config.tables.first else { throw BenchError("no table in the bench configuration") }
        let store = try ReplicaStore.open(
            directory: root + "/gateway", tables: config.tables, synchronousFull: synchronous == "full")
        print(
            """
            dally-bench drain: \(rows) rows (\(ids.rawValue) ids) written \(writeRows) a request, sent \(rowsPerBatch) \
            a batch, synchronous=\(synchronous), \(ProcessInfo.processInfo.activeProcessorCount) cores
            table \(schema.name): \(declarations.joined(separator: ", ")); data under \(root)
            """)
        let write = try await DrainSteps.write(rows, perRequest: writeRows, ids: ids, schema: schema, store: store)
        let drain = try await DrainSteps.drain(store: store, gateway: BenchConfigs.gatewayID(0), rowsPerBatch: rowsPerBatch)
        try store.close()
        print("")
        BenchOutput.table(
            [
                ["step", "rows", "wall s", "cpu s", "rows/s (wall)", "cpu us/row"],
                write.cells("write (local batches)"),
                drain.build.cells("build + record"),
                drain.settle.cells("settle answers"),
                drain.total.cells("drain (both)"),
            ], notes: false)
        print("")
        print(write.resultLine("drain_write"))
        print(drain.build.resultLine("drain_build"))
        print(drain.settle.resultLine("drain_settle"))
        print(drain.total.resultLine("drain_total") + " batches=\(drain.batches)")
    }
}
