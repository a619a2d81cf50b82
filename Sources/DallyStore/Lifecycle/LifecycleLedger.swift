import GRDB

/// What compaction, retention, resync and full outboxes did to each table, and each table's
/// horizon, kept in `dally_lifecycle` across restarts for stats and for readers' cursors.
public struct LifecycleLedger: Sendable, Equatable {
    /// The highest local sequence number of a purged tombstone: a local reader whose cursor is
    /// behind it (and not 0) must start again.
    public var horizon: Int64 = 0
    public var tombstonesPurged: Int64 = 0
    /// Synced rows removed by `retain`.
    public var retainedRemoved: Int64 = 0
    /// Pending changes dropped by `on_full = "drop_oldest"`.
    public var droppedOnFull: Int64 = 0
    /// Times the table was pulled again from scratch, and rows removed because the cloud no
    /// longer had them.
    public var resyncs: Int64 = 0
    public var cloudRemoved: Int64 = 0

    public init() {}

    static func add(
        _ table: String, horizon: Int64 = 0, tombstonesPurged: Int64 = 0, retainedRemoved: Int64 = 0,
        droppedOnFull: Int64 = 0, resyncs: Int64 = 0, cloudRemoved: Int64 = 0, db: Database
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO dally_lifecycle (tbl, horizon, tombstones_purged, retained_removed, dropped_on_full, resyncs, cloud_removed)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(tbl) DO UPDATE SET horizon = MAX(horizon, excluded.horizon),
                    tombstones_purged = tombstones_purged + excluded.tombstones_purged,
                    retained_removed = retained_removed + excluded.retained_removed,
                    dropped_on_full = dropped_on_full + excluded.dropped_on_full,
                    resyncs = resyncs + excluded.resyncs, cloud_removed = cloud_removed + excluded.cloud_removed
                """,
            arguments: [table, horizon, tombstonesPurged, retainedRemoved, droppedOnFull, resyncs, cloudRemoved])
    }

    /// How many of `table`'s pending changes `drop_oldest` has dropped, ever: a batch's record
    /// compares it with what its plan read (``ReplicaStore/nextBatch(gateway:maxRows:scope:excluding:)``).
    static func droppedOnFull(_ table: String, db: Database) throws -> Int64 {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT dropped_on_full FROM dally_lifecycle WHERE tbl = ?"), arguments: [table]) ?? 0
    }

    static func all(db: Database) throws -> [String: LifecycleLedger] {
        var result: [String: LifecycleLedger] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM dally_lifecycle") {
            var ledger = LifecycleLedger()
            ledger.horizon = row["horizon"]
            ledger.tombstonesPurged = row["tombstones_purged"]
            ledger.retainedRemoved = row["retained_removed"]
            ledger.droppedOnFull = row["dropped_on_full"]
            ledger.resyncs = row["resyncs"]
            ledger.cloudRemoved = row["cloud_removed"]
            result[row["tbl"]] = ledger
        }
        return result
    }
}
