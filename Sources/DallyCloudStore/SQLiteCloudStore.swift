import DallyCore
import DallyObjects
import DallySync
import Foundation
import DallyStore
import GRDB
import Synchronization

/// The cloud's primary copy in one SQLite database (WAL): the embedded ``CloudStore``.
///
/// Batches are applied one at a time on the writer connection, each in one transaction that
/// also records its answer; reads (downstream pages, notify checks) run on reader connections
/// concurrently with it. Object chunks live in `chunks.sqlite` beside the database
/// (``SQLiteChunkStore``), so that megabyte blob writes stay off the row writer.
public final class SQLiteCloudStore: CloudStore {
    public let directory: String
    public let databasePath: String
    let pool: DatabasePool
    /// The chunks of the cloud's objects, opened after the database (whose directory lock
    /// covers this file too).
    let chunkStore: SQLiteChunkStore
    let tables: [String: CloudTableSQL]
    private let lock: DataDirectoryLock
    private let state: Mutex<State>

    private struct State {
        var versions: [String: Int64]
        var observers: [@Sendable ([String: Int64]) -> Void] = []
    }

    /// Opens (creating if needed) the store in `directory` and migrates it to `tables`.
    ///
    /// - Throws: ``StoreError`` when the directory is locked by another process or the
    ///   configuration is incompatible with the stored data.
    public static func open(directory: String, tables: [TableSchema], synchronousFull: Bool = true) throws
        -> SQLiteCloudStore
    {
        // Row ids arrive in random order (UUIDs), so inserts touch index pages all over the
        // file; a larger page cache (64 MiB, SQLite's default is 2) keeps them in memory.
        let (pool, path, lock) = try DatabaseFiles.openPool(
            directory: directory, name: "cloud.sqlite", synchronousFull: synchronousFull,
            pragmas: ["PRAGMA cache_size = -65536"])
        let sql = tables.map(CloudTableSQL.init(schema:))
        do {
            try SchemaUpgrade.apply(migrator(), to: pool, file: path)
            let versions = try pool.write { db in
                try ColumnCatalogue.reconcile(sql, db: db)
                for table in sql {
                    try db.execute(sql: table.tombstoneIndexStatement)
                    try CloudScopeSQL(table)?.install(db: db)
                }
                var versions: [String: Int64] = [:]
                for table in sql { versions[table.schema.name] = 0 }
                for row in try Row.fetchAll(db, sql: "SELECT tbl, version FROM cloud_tables") {
                    versions[row[0]] = row[1]
                }
                return versions
            }
            let chunks = try SQLiteChunkStore.open(directory: directory, synchronousFull: synchronousFull)
            return SQLiteCloudStore(
                directory: directory, path: path, pool: pool, chunks: chunks, tables: sql, versions: versions, lock: lock)
        } catch {
            // Leave the directory unlocked for the next attempt (or another process).
            try? pool.close()
            lock.release()
            throw error
        }
    }

    private init(
        directory: String, path: String, pool: DatabasePool, chunks: SQLiteChunkStore, tables: [CloudTableSQL],
        versions: [String: Int64], lock: DataDirectoryLock
    ) {
        self.directory = directory
        self.databasePath = path
        self.pool = pool
        self.chunkStore = chunks
        self.tables = Dictionary(uniqueKeysWithValues: tables.map { ($0.schema.name, $0) })
        self.lock = lock
        self.state = Mutex(State(versions: versions))
    }

    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("cloud-v1") { db in
            try db.execute(sql: ColumnCatalogue.createStatement)
            try db.execute(
                sql: """
                    CREATE TABLE cloud_tables (tbl TEXT NOT NULL PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID;
                    CREATE TABLE cloud_batches (
                        gateway TEXT NOT NULL,
                        batch TEXT NOT NULL,
                        received_at INTEGER NOT NULL,
                        fingerprint INTEGER NOT NULL,
                        results BLOB NOT NULL,
                        PRIMARY KEY (gateway, batch)
                    ) WITHOUT ROWID;
                    CREATE INDEX cloud_batches_received_at ON cloud_batches(received_at);
                    """)
        }
        migrator.registerMigration("cloud-v2-dictionaries") { db in
            try db.execute(sql: SQLiteCloudStore.createDictionaries)
        }
        migrator.registerMigration("cloud-v3-objects") { db in
            try db.execute(sql: SQLiteCloudStore.createObjects)
        }
        migrator.registerMigration("cloud-v4-lifecycle") { db in
            // Each table's horizon (the highest version of a purged tombstone) sits beside its
            // version so that one read gives a page's cursor and whether the reader must
            // resync; gateways' cursors hold the horizon back while they are active.
            try db.execute(
                sql: """
                    ALTER TABLE cloud_tables ADD COLUMN horizon INTEGER NOT NULL DEFAULT 0;
                    CREATE TABLE cloud_gateway_cursors (
                        gateway TEXT NOT NULL, tbl TEXT NOT NULL, version INTEGER NOT NULL, seen_at INTEGER NOT NULL,
                        PRIMARY KEY (gateway, tbl)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("cloud-v5-declarations") { db in
            // What each gateway last told it declares (POST /v1/tables), for /stats.
            try db.execute(
                sql: """
                    CREATE TABLE cloud_gateway_declarations (
                        gateway TEXT NOT NULL PRIMARY KEY, document BLOB NOT NULL, told_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }

    public func schema(_ table: String) -> TableSchema? { tables[table]?.schema }

    public var versions: [String: Int64] { state.withLock { $0.versions } }

    public func observeCommits(_ observer: @escaping @Sendable ([String: Int64]) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    // MARK: - Batches

    public func apply(_ batch: BatchRequest, fingerprint: UInt64, pageRows: Int, now: Int64) async throws -> BatchAnswer {
        let tables = self.tables
        let scopes = try batch.scopes.validated({ tables[$0]?.schema }, field: "scopes")
        let signed = Int64(bitPattern: fingerprint)
        // A batch with no changes is a pull: nothing to apply, so nothing to remember. It reads
        // one snapshot and never queues for the writer, where a fleet's pulls after every
        // change would wait on each other and on the batches.
        if batch.sections.isEmpty {
            return try await pool.read { db in
                let versions = try Self.tableVersions(tables, db: db)
                if let replayed = try Self.replay(batch, signed: signed, scopes: scopes, tables: tables, versions: versions, pageRows: pageRows, db: db) {
                    return replayed
                }
                let changes = try Self.downstream(batch, scopes: scopes, tables: tables, versions: versions, pageRows: pageRows, db: db)
                return BatchAnswer(batchID: batch.batchID, replayed: false, results: [], changes: changes)
            }
        }
        let (answer, touched) = try await writing { db -> (BatchAnswer, [String: Int64]) in
            // The table counters are read in the transaction: the in-memory copy is published
            // after commit, possibly after the next batch has started.
            let versionsAtStart = try Self.tableVersions(tables, db: db)
            if let replayed = try Self.replay(batch, signed: signed, scopes: scopes, tables: tables, versions: versionsAtStart, pageRows: pageRows, db: db) {
                return (replayed, [:])
            }
            var applier = BatchApplier(batch: batch, tables: tables, versions: versionsAtStart)
            let results = try applier.apply(db: db)
            try db.execute(
                sql: "INSERT INTO cloud_batches (gateway, batch, received_at, fingerprint, results) VALUES (?, ?, ?, ?, ?)",
                arguments: [batch.gateway, batch.batchID, now, signed, Data(BatchAnswer.encodeResults(results))])
            let changes = try Self.downstream(batch, scopes: scopes, tables: tables, versions: applier.versions, pageRows: pageRows, db: db)
            let touched = applier.versions.filter { versionsAtStart[$0.key] != $0.value }
            return (BatchAnswer(batchID: batch.batchID, replayed: false, results: results, changes: changes), touched)
        }
        if !touched.isEmpty { publish(touched) }
        return answer
    }

    /// Every table's version in the transaction (0 for a table with no change yet).
    private static func tableVersions(_ tables: [String: CloudTableSQL], db: Database) throws -> [String: Int64] {
        var versions: [String: Int64] = [:]
        for name in tables.keys { versions[name] = 0 }
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT tbl, version FROM cloud_tables")) {
            versions[row[0]] = row[1]
        }
        return versions
    }

    /// The stored answer when `batch` was applied before, with a fresh downstream page; nil
    /// when it is new.
    ///
    /// - Throws: `batch_reused` when the id was used for a different body.
    private static func replay(
        _ batch: BatchRequest, signed: Int64, scopes: [String: TypedScope], tables: [String: CloudTableSQL],
        versions: [String: Int64], pageRows: Int, db: Database
    ) throws -> BatchAnswer? {
        guard let stored = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT fingerprint, results FROM cloud_batches WHERE gateway = ? AND batch = ?"),
            arguments: [batch.gateway, batch.batchID])
        else { return nil }
        guard (stored[0] as Int64) == signed else {
            throw DallyError(
                .batchReused,
                "gateway '\(batch.gateway)' already sent a different batch with id '\(batch.batchID)'; a retry must resend the same body, a new batch needs a new id")
        }
        let results = try BatchAnswer.decodeResults(try JSONParser.parse(Array(stored[1] as Data)), outline: batch.outline)
        let changes = try downstream(batch, scopes: scopes, tables: tables, versions: versions, pageRows: pageRows, db: db)
        return BatchAnswer(batchID: batch.batchID, replayed: true, results: results, changes: changes)
    }

    public func storedResults(gateway: String, batchID: String) async throws -> StoredBatchResults? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT fingerprint, results FROM cloud_batches WHERE gateway = ? AND batch = ?",
                arguments: [gateway, batchID]
            ).map { row in
                StoredBatchResults(fingerprint: UInt64(bitPattern: row[0] as Int64), results: Array(row[1] as Data))
            }
        }
    }

    /// One bounded page across the tables the gateway named, in the order it named them.
    private static func downstream(
        _ batch: BatchRequest, scopes: [String: TypedScope], tables: [String: CloudTableSQL], versions: [String: Int64],
        pageRows: Int, db: Database
    ) throws -> [ChangePage] {
        var budget = pageRows
        var pages: [ChangePage] = []
        for (name, since) in batch.since.entries {
            guard let table = tables[name] else { continue }
            let version = versions[name] ?? 0
            // A cursor ahead of the version is a restored cloud's: answered with a resync page.
            guard since != version else { continue }
            let page = try CloudPageReader.page(
                table, asked: since, resyncing: batch.resyncing.contains(name), regressed: batch.regressed.contains(name),
                horizon: try CloudPageReader.state(of: name, db: db).horizon, limit: budget,
                excludingReplica: batch.origin, scope: scopes[name], tableVersion: version, db: db)
            budget -= page.rows.count
            pages.append(page)
        }
        return pages
    }

    private func publish(_ touched: [String: Int64]) {
        let observers = state.withLock { state in
            for (table, version) in touched { state.versions[table] = max(state.versions[table] ?? 0, version) }
            return state.observers
        }
        for observer in observers { observer(touched) }
    }

    // MARK: - Reads

    public func changes(
        table: String, since: Int64, limit: Int, excludingReplica: String?, scope: TypedScope?, resyncing: Bool
    ) async throws -> ChangePage {
        guard let sql = tables[table] else { throw DallyError(.unknownTable, "the cloud has no table '\(table)'") }
        // The version, the horizon and the rows come from one read transaction.
        return try await pool.read { db in
            let state = try CloudPageReader.state(of: table, db: db)
            return try CloudPageReader.page(
                sql, asked: since, resyncing: resyncing, horizon: state.horizon, limit: limit,
                excludingReplica: excludingReplica, scope: scope, tableVersion: state.version, db: db)
        }
    }

    public func hasChanges(
        table: String, since: Int64, excludingReplica: String?, scope: TypedScope?
    ) async throws -> Bool {
        guard let sql = tables[table], since < versions[table] ?? 0 else { return false }
        if scope != nil {
            let page = try await changes(table: table, since: since, limit: 1, excludingReplica: excludingReplica, scope: scope)
            return !page.rows.isEmpty
        }
        guard let excludingReplica else { return true }
        return try await pool.read { db in
            try Bool.fetchOne(db.cachedStatement(sql: sql.selectForeignExists), arguments: [since, excludingReplica])
                ?? false
        }
    }

    /// A write transaction on the store; a full disk is answered `507 insufficient_storage`
    /// (``FullDisk``) instead of `500`: the gateways resend what it refused.
    func writing<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(updates)
        } catch {
            throw FullDisk.refusal(
                for: error,
                "the cloud's disk is full: nothing of the request was saved (reads go on). Free space in the filesystem of its data_dir; gateways send again by themselves")
        }
    }

    // MARK: - Upkeep

    public func forgetAnswers(receivedBefore before: Int64) async throws -> Int {
        try await writing { db in
            try db.execute(sql: "DELETE FROM cloud_batches WHERE received_at < ?", arguments: [before])
            return db.changesCount
        }
    }

    public func statistics() async throws -> CloudStoreStatistics {
        let tables = self.tables
        let versions = self.versions
        let counts = try await pool.read { db in
            var result: [String: CloudStoreStatistics.Table] = [:]
            for (name, table) in tables {
                let rows = try Int64.fetchOne(db, sql: table.rowCountStatement) ?? 0
                let tombstones = try Int64.fetchOne(db, sql: table.tombstoneCountStatement) ?? 0
                let horizon = try CloudPageReader.state(of: name, db: db).horizon
                result[name] = .init(
                    version: versions[name] ?? 0, live: rows - tombstones, tombstones: tombstones, horizon: horizon)
            }
            let answers = try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM cloud_batches") ?? 0
            let objects = try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM cloud_objects") ?? 0
            return (result, answers, objects)
        }
        return CloudStoreStatistics(
            tables: counts.0, storedAnswers: counts.1, bytesOnDisk: DatabaseFiles.bytes(of: databasePath),
            objects: counts.2)
    }

    public func close() throws {
        try chunkStore.close()
        try pool.close()
        lock.release()
    }
}
