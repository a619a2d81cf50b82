import DallyCore
import Foundation
import GRDB
import Synchronization

/// The gateway's local replica: every configured table, the outbox and the local sequence, in
/// one SQLite database in WAL mode.
///
/// Writes go through a ``GroupCommit``: a caller is answered only after the transaction that
/// holds its row, its sequence number and its outbox entry has committed. Reads run
/// concurrently with writes on the pool's reader connections.
///
/// For example:
///
/// ```swift
/// let store = try ReplicaStore.open(directory: "data", tables: config.tables)
/// let row = try await store.write(RowWrite(id: "o1", kind: .put, values: [(0, .text("Ada"))],
///                                          updatedAt: nil, expectedSeq: nil), table: "orders")
/// ```
public final class ReplicaStore: Sendable {
    /// What a commit changed, passed to commit observers: the tables written (with the highest
    /// sequence number each received), the last sequence number overall, and what the commit
    /// added to each table's outbox.
    public struct CommitNotice: Sendable {
        public let tables: [String: Int64]
        public let lastSeq: Int64
        public let outbox: [String: Outbox.Growth]
        /// Per table, columns whose values from the cloud the replica could not hold: the
        /// table's configuration and the cloud's disagree on their types.
        public let notHeld: [String: Set<String>]

        public init(
            tables: [String: Int64], lastSeq: Int64, outbox: [String: Outbox.Growth] = [:], notHeld: [String: Set<String>] = [:]
        ) {
            self.tables = tables
            self.lastSeq = lastSeq
            self.outbox = outbox
            self.notHeld = notHeld
        }
    }

    public let directory: String
    public let databasePath: String
    /// This copy of the data's id, sent to the cloud so that its own changes are not echoed back.
    public let replicaID: String
    let tables: [String: TableSQL]
    let pool: DatabasePool
    private let ledger: CommitLedger
    let groupCommit: GroupCommit
    /// Wall-clock milliseconds since 1970, as injected at open.
    let now: @Sendable () -> Int64
    /// The most rows one sync transaction applies or records, so that no sync step holds the
    /// writer long while local writes wait (see ``GroupCommit``).
    let syncPieceRows: Int
    /// The most pieces of an answer one transaction applies while no local write waits.
    let idleAnswerPieces: Int
    /// Called after each sync piece commits; tests make it throw to stop an apply between
    /// pieces as a crash would.
    let afterSyncPiece = Mutex<(@Sendable () throws -> Void)?>(nil)
    private let lock: DataDirectoryLock
    /// Per table, the horizon (``LifecycleLedger/horizon``), raised before the tombstones
    /// behind it are purged so that a reader checking after its read never misses one.
    let horizons: Mutex<[String: Int64]>
    /// Per table, the id of the last row the last batch took: the next batch goes on after it
    /// (``pendingSection``). In memory: after a restart batches start again from the first id.
    let sendCursors = Mutex<[String: String]>([:])
    /// The page statements clients' filters shape, cached within a bound.
    let statementShapes = StatementShapes()

    /// Opens (creating if needed) the replica in `directory` and migrates it to `tables`.
    ///
    /// - Parameters:
    ///   - synchronousFull: fsync every commit (survives power loss) rather than only
    ///     surviving a crash of the process.
    ///   - now: wall-clock milliseconds since 1970, injected for tests.
    /// - Throws: ``StoreError`` when the directory is locked by another process or the
    ///   configuration is incompatible with the stored data; GRDB's `DatabaseError` for I/O.
    public static func open(
        directory: String,
        tables: [TableSchema],
        synchronousFull: Bool = true,
        syncPieceRows: Int = ReplicaStore.defaultSyncPieceRows,
        idleAnswerPieces: Int = ReplicaStore.defaultIdleAnswerPieces,
        minFreeBytes: Int64 = 0,
        maxBytes: Int64 = 0,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) throws -> ReplicaStore {
        let (pool, path, lock) = try DatabaseFiles.openPool(
            directory: directory, name: "replica.sqlite", synchronousFull: synchronousFull,
            writerStatements: ["PRAGMA cache_size = -\(Self.writerCacheKiB)", AcceptedRows.scratchTable])
        let tableSQL = tables.map(TableSQL.init(schema:))
        do {
            // Pages that compaction and retention free go back to the filesystem
            // (`incremental_vacuum` after each pass). Only an empty file takes the mode cheaply
            // (the `VACUUM` that applies it rewrites the file), so an older replica keeps its
            // pages until an operator vacuums it.
            try pool.writeWithoutTransaction { db in
                if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") == 0 {
                    try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL; VACUUM")
                }
            }
            try SchemaUpgrade.apply(ReplicaSchema.migrator(), to: pool, file: path)
        } catch {
            lock.release()
            throw error
        }
        let (initial, replicaID, horizons) = try pool.write { db in
            let added = try ColumnCatalogue.reconcile(tableSQL, db: db)
            for table in tableSQL {
                if let columns = added[table.schema.name] { try ColumnFill.begin(table, added: columns, now: now(), db: db) }
                try LocalRowsQueue.reconcile(table, now: now(), db: db)
                for statement in table.lifecycleIndexStatements { try db.execute(sql: statement) }
            }
            try MoveLog.install(tableSQL, db: db)
            let replicaID = try String.fetchOne(db, sql: "SELECT value FROM dally_settings WHERE key = 'replica_id'")
            let horizons = try LifecycleLedger.all(db: db).mapValues(\.horizon)
            return (try Self.loadCommitted(tableSQL, db: db), replicaID ?? "", horizons)
        }
        return ReplicaStore(
            directory: directory, path: path, replicaID: replicaID, tables: tableSQL, pool: pool, initial: initial,
            horizons: horizons, freeSpace: FreeSpaceFloor(directory: directory, minFreeBytes: minFreeBytes),
            ceiling: ReplicaCeiling(path: path, maxBytes: maxBytes), lock: lock, synchronousFull: synchronousFull, syncPieceRows: syncPieceRows,
            idleAnswerPieces: idleAnswerPieces, now: now)
    }

    /// The writer's page cache, in KiB (SQLite's default is 2,000): a batch of local writes,
    /// or an answer's pieces joined in one transaction, touches pages all over the row table
    /// and the outbox for random ids, and pages that do not fit are written out and read back
    /// within the transaction. Readers keep the default. Backlog writes of 5,000 rows went
    /// 1.18× faster with it (docs/BENCHMARKS.md); SQLite takes the memory only as pages are
    /// used, as the cloud's store does with the same size.
    static let writerCacheKiB = 65_536

    /// Rows per sync transaction unless configured: measured to keep each under a few
    /// milliseconds on a small box (docs/BENCHMARKS.md, local write latency); the same as the
    /// configuration's default, `store.sync_piece_rows`.
    public static let defaultSyncPieceRows = 256

    /// Pieces of an answer one transaction applies while no local write waits, unless given:
    /// 64 pieces of 256 rows hold a whole answer to a default batch (`max_batch_rows` 5,000).
    /// For random ids a transaction dirties a page of the row table and of the outbox for
    /// nearly every row it settles, and the fewer transactions an answer takes the more rows
    /// share each page: one of 5,000 rows took 0.8–0.9× the writer time of 4,096 and 904
    /// (`tools/bench/answer_settle.py`), and the drain's answers 0.86–0.95×
    /// (docs/BENCHMARKS.md). A local write that arrives meanwhile waits for one piece at most,
    /// as before.
    public static let defaultIdleAnswerPieces = 64

    private init(
        directory: String, path: String, replicaID: String, tables: [TableSQL], pool: DatabasePool,
        initial: CommitLedger.State, horizons: [String: Int64], freeSpace: FreeSpaceFloor, ceiling: ReplicaCeiling,
        lock: DataDirectoryLock,
        synchronousFull: Bool, syncPieceRows: Int, idleAnswerPieces: Int, now: @escaping @Sendable () -> Int64
    ) {
        self.horizons = Mutex(horizons)
        self.maxBytes = ceiling.maxBytes > 0 ? ceiling.maxBytes : nil
        self.now = now
        self.syncPieceRows = max(1, syncPieceRows)
        self.idleAnswerPieces = max(1, idleAnswerPieces)
        self.directory = directory
        self.replicaID = replicaID
        self.databasePath = path
        self.tables = Dictionary(uniqueKeysWithValues: tables.map { ($0.schema.name, $0) })
        self.pool = pool
        self.lock = lock
        let ledger = CommitLedger(initial)
        self.ledger = ledger
        self.groupCommit = GroupCommit(
            writer: pool,
            synchronousFull: synchronousFull,
            freeSpace: freeSpace,
            ceiling: ceiling,
            begin: { CommitContext(lastSeq: ledger.lastSeq, now: now()) },
            committed: { ledger.record($0) }
        )
    }

    private static func loadCommitted(_ tables: [TableSQL], db: Database) throws -> CommitLedger.State {
        let lastSeq = try Int64.fetchOne(db, sql: "SELECT value FROM dally_meta WHERE key = 'last_seq'") ?? 0
        var latest: [String: Int64] = [:]
        var counts: [String: TableCounts] = [:]
        for table in tables {
            latest[table.schema.name] = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM \(table.sqlTable)") ?? 0
            var tableCounts = TableCounts()
            for row in try Row.fetchAll(db, sql: "SELECT deleted, COUNT(*) FROM \(table.sqlTable) GROUP BY deleted") {
                if (row[0] as Int64) == 0 { tableCounts.live = row[1] } else { tableCounts.tombstones = row[1] }
            }
            counts[table.schema.name] = tableCounts
        }
        return CommitLedger.State(lastSeq: max(lastSeq, latest.values.max() ?? 0), latestByTable: latest, counts: counts)
    }

    // MARK: - Schema and state

    /// The configured schema of `table`, or nil for a table the configuration does not declare.
    public func schema(_ table: String) -> TableSchema? { tables[table]?.schema }

    /// The names of all configured tables, sorted.
    public var tableNames: [String] { tables.keys.sorted() }

    /// The last local sequence number committed.
    public var lastSeq: Int64 { ledger.lastSeq }

    /// Per table, the highest sequence number it holds.
    public var latestSeqByTable: [String: Int64] { ledger.latestByTable }

    /// Per table: live rows, tombstones, and writes and coalesced writes since start.
    public var counts: [String: TableCounts] { ledger.counts }

    /// How long local writes waited for their commit, and how long sync work held the writer.
    public var writerTimings: WriterTimings.Snapshot { groupCommit.timings.snapshot }

    /// Calls `observer` after every commit that changed rows, on the writer's queue, before
    /// the writers are answered. Observers must return quickly.
    public func observeCommits(_ observer: @escaping @Sendable (CommitNotice) -> Void) {
        ledger.observe(observer)
    }

    /// Bytes on disk of the database and its write-ahead log.
    public var sizeOnDisk: Int64 { DatabaseFiles.bytes(of: databasePath) }

    /// The bound on ``sizeOnDisk`` for local writes (`store.max_bytes`); nil when unbounded.
    public let maxBytes: Int64?

    func tableSQL(_ table: String) throws(DallyError) -> TableSQL {
        guard let sql = tables[table] else { throw DallyError(.unknownTable, "no table named '\(table)'") }
        return sql
    }

    // MARK: - Writes

    /// Applies one row write and returns the row as stored once the write is durable.
    ///
    /// - Throws: ``DallyError`` `not_found` or `version_mismatch` (with the current row), or a
    ///   storage error; a refused write changes nothing.
    public func write(_ write: RowWrite, table: String) async throws -> StoredRow {
        let sql = try tableSQL(table)
        return try await groupCommit.perform { db, context in
            try RowWriter.apply(write, table: sql, db: db, context: &context).row
        }
    }

    /// Applies many row writes to one table in one transaction.
    ///
    /// Each write that is refused is reported with its id and reason and the others are saved;
    /// with `allOrNothing`, one refusal saves nothing and the outcome lists every refusal.
    public func writeBatch(_ writes: [RowWrite], table: String, allOrNothing: Bool) async throws -> BatchOutcome {
        let sql = try tableSQL(table)
        do {
            return try await groupCommit.perform { db, context in
                var outcome = BatchOutcome()
                for write in writes {
                    do {
                        let result = try RowWriter.apply(write, table: sql, db: db, context: &context)
                        outcome.saved.append(write.id)
                        outcome.lastSeq = max(outcome.lastSeq, result.row.seq)
                    } catch let error as DallyError {
                        outcome.errors.append(BatchOutcome.RowError(id: write.id, error: error))
                    }
                }
                if allOrNothing, !outcome.errors.isEmpty { throw BatchRefused(outcome: outcome) }
                return outcome
            }
        } catch let refused as BatchRefused {
            return BatchOutcome(saved: [], errors: refused.outcome.errors, lastSeq: 0)
        }
    }

    // MARK: - Reads

    /// The row `id` of `table`, tombstones included; nil when it never existed.
    public func row(table: String, id: String) async throws -> StoredRow? {
        let sql = try tableSQL(table)
        return try await pool.read { db in
            try Row.fetchOne(db.cachedStatement(sql: sql.selectByID), arguments: [id])
                .map { RowDecoding.storedRow($0, schema: sql.schema) }
        }
    }

    /// Rows of `table` changed after local sequence `since`, in sequence order.
    public func rows(_ query: RowQuery) async throws -> Page {
        let sql = try tableSQL(query.table)
        let shapes = statementShapes
        return try await pool.read { db in try PageReader.rows(query, table: sql, shapes: shapes, db: db) }
    }

    /// Changes (rows and tombstones) of several tables after `since`, merged in sequence order.
    ///
    /// With `filters` (by table name), a filtered table gives the rows that pass its filter and
    /// those that left it since `since` (``Page/left``); see ``MoveLog``.
    public func changes(
        tables names: [String], since: Int64, limit: Int, filters: [String: RowFilter] = [:]
    ) async throws -> Page {
        var sqls: [TableSQL] = []
        for name in names { sqls.append(try tableSQL(name)) }
        let (tables, shapes) = (sqls, statementShapes)
        return try await pool.read { db in
            try PageReader.changes(tables: tables, since: since, limit: limit, filters: filters, shapes: shapes, db: db)
        }
    }

    /// Outbox depth, size and oldest first-dirty time for every table with entries.
    public func outboxSummary() async throws -> [Outbox.Summary] {
        let atomicTables = self.atomicTables
        return try await pool.read { db in try Outbox.summaries(db: db, atomicTables: atomicTables) }
    }

    /// All outbox entries of `table`, oldest first.
    public func outboxEntries(table: String) async throws -> [Outbox.Entry] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT tbl, row_id, first_dirty_at, last_write_at, base_version, writes FROM dally_outbox
                    WHERE tbl = ? ORDER BY first_dirty_at, row_id
                    """,
                arguments: [table]
            ).map {
                Outbox.Entry(
                    table: $0[0], rowID: $0[1], firstDirtyAt: $0[2], lastWriteAt: $0[3], baseVersion: $0[4],
                    writes: $0[5])
            }
        }
    }

    /// Closes the database and releases the data directory; further calls fail.
    public func close() throws {
        try pool.close()
        lock.release()
    }
}
private struct BatchRefused: Error {
    let outcome: BatchOutcome
}
