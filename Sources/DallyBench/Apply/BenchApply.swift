import DallyLogging
import ArgumentParser
import DallyCore
import DallySync
import DallyTestSupport
import Foundation

/// `dally-bench apply`: the cloud's batch apply rate, in rows per second, four ways in one run,
/// each into its own fresh database in a temporary directory, after the bodies' decoding alone
/// (``ApplyDecode``: from their bytes, as the cloud decodes, and through a `JSONValue` tree):
///
/// 1. `store`: `SQLiteCloudStore.apply` on batches built beforehand (no HTTP, no JSON);
/// 2. `http x1`: a real cloud on 127.0.0.1 receiving `POST /v1/batches` (zstd bodies, HTTP
///    Basic as a gateway) from one gateway, one batch at a time;
/// 3. `http xN`: the same from N concurrent gateways (distinct gateway and replica ids);
/// 4. `sqlite`: plain GRDB inserts of the same rows into a table of the same shape, one
///    transaction per batch: the limit to compare the other three with;
/// 5. with `--postgres`, on a throwaway PostgreSQL cluster: 1, 2 and 4 `PostgresCloudStore`
///    nodes over one database, and PostgreSQL's own limit (``ApplyPostgres``).
///
/// Every part writes the same number of rows. Rows look like orders (uuid-like id, customer
/// TEXT, total REAL, paid BOOLEAN, items JSON, or `--columns`); with `--updates F`, a fraction
/// F of each batch after the first updates rows created shortly before. Batches name no
/// `since`, so answers carry no downstream page: this measures applying, not serving.
///
/// Rates are rows over summed batch times when batches go one at a time (with the rate over
/// the first and the last tenth, since the table grows during a run), over wall time when
/// gateways send at once. Random ids (the default) spread inserts over the whole primary key;
/// `--ids ordered` shows what time-ordered ids change.
struct BenchApply: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Measure the cloud's batch apply rate: store alone, over HTTP (1 and N gateways), raw SQLite."
    )

    @Option(name: .long, help: "Rows in each batch.")
    var rowsPerBatch = 1000

    @Option(name: .long, help: "Batches per part (split among the gateways in the concurrent part).")
    var batches = 200

    @Option(name: .long, help: "Columns of the bench table, comma-separated \"name TYPE\" (no OBJECT).")
    var columns = BenchConfigs.orderColumns.joined(separator: ",")

    @Option(name: .long, help: "New row ids: uuid (random, v4-like) or ordered (time-ordered, v7-like).")
    var ids = BenchIDs.uuid

    @Option(name: .long, help: "Fraction of each batch (after the first) that updates existing rows, 0 to 1.")
    var updates = 0.0

    @Option(name: .long, help: "SQLite synchronous mode of every database: full (the default config) or normal.")
    var synchronous = "full"

    @Option(name: .long, help: "Concurrent gateways in the concurrent HTTP part.")
    var gateways = 4

    @Option(name: .long, help: "zstd level of the request bodies (1-19).")
    var level = 3

    @Option(name: .long, help: "Log level of the servers (to standard error).")
    var logLevel = "error"

    @Flag(name: .long, help: "Keep the temporary data directories.")
    var keep = false

    @Flag(name: .long, help: "Add PostgreSQL parts (1, 2 and 4 store nodes, and plain upserts) on a throwaway cluster.")
    var postgres = false

    func validate() throws {
        guard rowsPerBatch >= 1, rowsPerBatch <= 1_000_000 else {
            throw ValidationError("--rows-per-batch: 1 to 1000000")
        }
        guard batches >= 1 else { throw ValidationError("--batches: at least 1") }
        guard (0...1).contains(updates) else { throw ValidationError("--updates: a fraction from 0 to 1") }
        guard ["full", "normal"].contains(synchronous) else { throw ValidationError("--synchronous: full or normal") }
        guard gateways >= 1, gateways <= batches else { throw ValidationError("--gateways: 1 to --batches") }
        guard (1...19).contains(level) else { throw ValidationError("--level: 1 to 19") }
    }

    func run() async throws {
        LogOutput.bootstrap(level: logLevel)
        let declarations = try BenchConfigs.columns(columns)
        let root = try BenchOutput.temporaryDirectory("apply")
        var results: [ApplyResult] = []
        do {
            let setup = try ApplySetup(
                root: root, columns: declarations, rowsPerBatch: rowsPerBatch, batches: batches, updates: updates,
                ids: ids, synchronousFull: synchronous == "full", gateways: gateways, level: level, logLevel: logLevel)
            printHeader(setup)
            let prebuilt = setup.prebuiltBatches()
            results.append(try ApplyDecode.tree(prebuilt))
            results.append(try ApplyDecode.straight(prebuilt))
            results.append(try await ApplyStore.store(prebuilt, setup: setup))
            results.append(try await ApplyOverHTTP(setup: setup).sequential(prebuilt))
            results.append(try await ApplyOverHTTP(setup: setup).concurrent())
            results.append(try await ApplyStore.rawSQLite(prebuilt, setup: setup))
            if postgres {
                let cluster = try PostgresCluster.start()
                defer { cluster.stop() }
                for nodes in [1, 2, 4] {
                    results.append(try await ApplyPostgres.nodes(nodes, setup: setup, cluster: cluster))
                }
                for form in [ApplyPostgres.PlainForm.values, .arrays] {
                    results.append(try await ApplyPostgres.plain(prebuilt, form: form, setup: setup, cluster: cluster))
                }
            }
        } catch {
            if !keep { try? FileManager.default.removeItem(atPath: root) }
            throw error
        }
        if keep { print("kept \(root)") } else { try? FileManager.default.removeItem(atPath: root) }
        printResults(results)
    }

    private func printHeader(_ setup: ApplySetup) {
        let rows = rowsPerBatch * batches
        let id = ids == .uuid ? "random uuid-like" : "time-ordered uuid-like"
        print(
            """
            dally-bench apply: \(batches) batches x \(rowsPerBatch) rows = \(rows) rows per part, \
            updates \(Int((updates * 100).rounded()))%, synchronous=\(synchronous), zstd level \(level), \
            \(ProcessInfo.processInfo.activeProcessorCount) cores
            table orders: id TEXT (\(id)), \(setup.columns.joined(separator: ", ")); data under \(setup.root)
            """)
    }

    private func printResults(_ results: [ApplyResult]) {
        var rows = [["part", "rows/s", "first/last 10%", "batch p50 ms", "p99 ms", "max ms", "notes"]]
        for result in results {
            rows.append([
                result.label, String(Int(result.rowsPerSecond.rounded())),
                result.trend.map { "\(Int($0.first.rounded())) / \(Int($0.last.rounded()))" } ?? "-",
                BenchOutput.figure(result.perBatch.percentile(50)),
                BenchOutput.figure(result.perBatch.percentile(99)), BenchOutput.figure(result.perBatch.max),
                result.notes,
            ])
        }
        print("")
        BenchOutput.table(rows, notes: true)
        let byName = Dictionary(results.map { ($0.name, $0.rowsPerSecond) }, uniquingKeysWith: { first, _ in first })
        if let store = byName["store"], let raw = byName["sqlite"], raw > 0, store > 0 {
            let http = results.filter { $0.name.hasPrefix("http") }
                .map { "\($0.label) \(Int((100 * $0.rowsPerSecond / store).rounded()))% of store" }
            print(
                "\nstore = \(Int((100 * store / raw).rounded()))% of raw SQLite; " + http.joined(separator: ", ")
                    + "; target 100000 rows/s")
        }
        if let one = byName["pg-1"], let four = byName["pg-4"], let values = byName["pg-plain"],
            let arrays = byName["pg-plain-arrays"], one > 0
        {
            print(
                "\npg x1 node = \(Int((100 * one / values).rounded()))% of plain VALUES, "
                    + "\(Int((100 * one / arrays).rounded()))% of plain unnest (target 70%); "
                    + "pg x4 = \(String(format: "%.2f", four / one))x pg x1 (target 2x)")
        }
        print("")
        for result in results { print(result.resultLine) }
    }
}
