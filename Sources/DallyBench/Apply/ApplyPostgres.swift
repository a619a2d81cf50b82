import DallyCloudPostgres
import DallyConfig
import DallyCore
import DallySync
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import PostgresNIO

/// The PostgreSQL parts of `dally-bench apply --postgres`, each in a fresh database of one
/// throwaway cluster (`PostgresCluster`, fsync off):
///
/// - `pg xK nodes`: K `PostgresCloudStore`s over one database (each with its own connection
///   pool and listener, as K `dally cloud` nodes would have; here in one process, without
///   HTTP), `--gateways` senders spread over them, all at once; rows over wall time.
/// - `pg plain`: the same rows as plain `INSERT … ON CONFLICT (id) DO UPDATE`, one statement
///   and one transaction per batch, through one connection: PostgreSQL's own limit for this
///   shape of table, with no conflict rule and no stored answer. In two forms: a multi-row
///   `VALUES` list with a parameter per cell (the issue's definition of the limit), and the
///   store's own `unnest` statement of one array per column (`PostgresTableSQL.upsert`), so
///   that the store is compared with the faster of the two as well.
enum ApplyPostgres {
    /// How the plain part sends a batch's rows.
    enum PlainForm {
        case values, arrays
    }

    static func nodes(_ count: Int, setup: ApplySetup, cluster: PostgresCluster) async throws -> ApplyResult {
        let database = try cluster.createDatabase()
        let logger = Logger(label: "dally.bench.postgres")
        var stores: [PostgresCloudStore] = []
        for _ in 0..<count { stores.append(try await PostgresCloudStore.open(database, tables: [setup.schema], logger: logger)) }
        defer { for store in stores { try? store.close() } }
        // Every sender's batches, built and fingerprinted beforehand: the figure is the store's.
        var feeds: [[(BatchRequest, UInt64)]] = []
        for n in 0..<setup.gateways {
            let share = setup.batches / setup.gateways + (n < setup.batches % setup.gateways ? 1 : 0)
            var maker = setup.maker(n)
            feeds.append(
                (0..<share).map { _ in
                    let batch = maker.next()
                    maker.assumeAccepted(batch)
                    return (batch, Fingerprint.of(batch.encode()))
                })
        }
        let clock = ContinuousClock()
        let start = clock.now
        let results = try await withThrowingTaskGroup(of: (Samples, ApplyTally).self) { group in
            for (n, feed) in feeds.enumerated() {
                let store = stores[n % count]
                group.addTask {
                    var samples = Samples()
                    var tally = ApplyTally()
                    for (batch, fingerprint) in feed {
                        let begun = clock.now
                        let answer = try await store.apply(
                            batch, fingerprint: fingerprint, pageRows: 1000, now: Int64(Date().timeIntervalSince1970 * 1000))
                        samples.add(clock.now - begun)
                        tally.add(answer)
                    }
                    return (samples, tally)
                }
            }
            var all: [(Samples, ApplyTally)] = []
            for try await result in group { all.append(result) }
            return all
        }
        let wall = clock.now - start
        var samples = Samples()
        var tally = ApplyTally()
        for (part, partTally) in results {
            samples.merge(part)
            tally.add(partTally)
        }
        var result = ApplyResult(
            name: "pg-\(count)", label: "pg x\(count) nodes, \(setup.gateways) senders",
            rows: feeds.reduce(0) { $0 + $1.reduce(0) { $0 + $1.0.rowCount } }, seconds: wall.benchSeconds,
            perBatch: samples, notes: tally.text)
        result.inOrder = false
        return result
    }

    /// Plain multi-row upserts of gateway 0's rows: see the type's documentation.
    static func plain(_ batches: [BatchRequest], form: PlainForm, setup: ApplySetup, cluster: PostgresCluster)
        async throws -> ApplyResult
    {
        let database = try cluster.createDatabase()
        let logger = Logger(label: "dally.bench.postgres")
        let configuration = PostgresConnection.Configuration(
            host: database.host, port: database.port, username: database.username, password: nil,
            database: database.database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        let columns = setup.schema.columns.map { "\"c_\($0.name)\" \(PostgresTableSQL.storageType($0.type))" }
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE TABLE t_orders (
                        id TEXT NOT NULL PRIMARY KEY, version BIGINT NOT NULL UNIQUE, updated_at BIGINT NOT NULL,
                        deleted BOOLEAN NOT NULL DEFAULT FALSE, origin TEXT NOT NULL, batch TEXT NOT NULL\
                    \(columns.map { ", \($0)" }.joined()))
                    """), logger: logger)
        let names = setup.schema.columns.map { "\"c_\($0.name)\"" }
        var version: Int64 = 0
        var samples = Samples()
        let clock = ContinuousClock()
        do {
            for batch in batches {
                // Binds are built before the clock starts: the figure is PostgreSQL's alone.
                let (sql, binds) = try form == .values
                    ? valuesUpsert(batch, names: names, setup: setup, version: &version)
                    : arraysUpsert(batch, setup: setup, version: &version)
                let start = clock.now
                try await connection.query("BEGIN", logger: logger)
                try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
                try await connection.query("COMMIT", logger: logger)
                samples.add(clock.now - start)
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return ApplyResult(
            name: form == .values ? "pg-plain" : "pg-plain-arrays",
            label: "pg plain upsert (\(form == .values ? "VALUES" : "unnest arrays")), 1 conn",
            rows: batches.reduce(0) { $0 + $1.rowCount }, seconds: samples.total / 1000, perBatch: samples,
            notes: "the limit: same rows, one upsert per batch")
    }

    /// A multi-row `VALUES` list, a parameter per cell.
    private static func valuesUpsert(_ batch: BatchRequest, names: [String], setup: ApplySetup, version: inout Int64)
        throws -> (String, PostgresBindings)
    {
        var binds = PostgresBindings()
        var tuples: [String] = []
        let origin = "\(batch.gateway)/\(batch.replica)"
        for section in batch.sections {
            for change in section.changes {
                version += 1
                let base = binds.count
                binds.append(change.id)
                binds.append(version)
                binds.append(change.updatedAt)
                binds.append(origin)
                binds.append(batch.batchID)
                for (json, column) in zip(change.values, setup.schema.columns) {
                    PostgresValues.bind(try Value(wire: json, for: column), into: &binds)
                }
                let places = (1...(5 + names.count)).map { "$\(base + $0)" }
                tuples.append("(\(places[0...2].joined(separator: ", ")), FALSE, \(places[3...].joined(separator: ", ")))")
            }
        }
        let updates = (["version", "updated_at", "origin", "batch"] + names).map { "\($0) = excluded.\($0)" }
        let sql = "INSERT INTO t_orders (id, version, updated_at, deleted, origin, batch\(names.map { ", \($0)" }.joined())) "
            + "VALUES \(tuples.joined(separator: ", ")) ON CONFLICT (id) DO UPDATE SET \(updates.joined(separator: ", "))"
        return (sql, binds)
    }

    /// One array per column, turned back into rows by `unnest`.
    private static func arraysUpsert(_ batch: BatchRequest, setup: ApplySetup, version: inout Int64)
        throws -> (String, PostgresBindings)
    {
        var ids = PostgresColumnArray(of: .text)
        var versions = PostgresColumnArray(of: .bigint)
        var updated = PostgresColumnArray(of: .bigint)
        var columns = setup.schema.columns.map { PostgresColumnArray($0.type) }
        for section in batch.sections {
            for change in section.changes {
                version += 1
                ids.append(change.id)
                versions.append(version)
                updated.append(change.updatedAt)
                for (i, (json, column)) in zip(change.values, setup.schema.columns).enumerated() {
                    columns[i].append(try Value(wire: json, for: column))
                }
            }
        }
        var binds = PostgresBindings()
        binds.append(ids)
        binds.append(versions)
        binds.append(updated)
        binds.append("\(batch.gateway)/\(batch.replica)")
        binds.append(batch.batchID)
        for column in columns { binds.append(column) }
        // The store's own statement: the same table shape, the rows as the store sends them.
        let sql = PostgresTableSQL(schema: setup.schema).upsert(columns: Array(setup.schema.columns.indices))
        return (sql, binds)
    }
}
