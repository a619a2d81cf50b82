import DallySync
import GRDB

/// What `/stats` and `/metrics` read of the replica, from one read transaction: a consistent
/// picture, and one trip to a reader instead of one for each part (each trip waits for a
/// reader's queue and then for a thread of the cooperative pool, which a drain keeps busy).
///
/// ```swift
/// let snapshot = try await store.snapshot()
/// let waiting = snapshot.outbox.reduce(0) { $0 + $1.pending }
/// ```
public struct ReplicaSnapshot: Sendable {
    /// Per table with entries, the outbox's summary (``Outbox/summaries(db:atomicTables:)``).
    public let outbox: [Outbox.Summary]
    /// Per table, the conflicts still open.
    public let openConflicts: [String: Int64]
    /// Per table, the data lifecycle's counts and horizons.
    public let lifecycle: [String: LifecycleLedger]
    public let objectTotals: ObjectTotals
    /// Per table, the objects waiting to go up.
    public let objectUploads: [ObjectUploadSummary]
    /// Per synced table, the cloud version its pulls have reached (0 before the first).
    public let cloudCursors: TableVersions
    /// Per table whose added columns are being filled from the cloud, those columns
    /// (``ColumnFill``).
    public let filling: [String: [String]]
}

extension ReplicaStore {
    /// The replica's figures for `/stats` and `/metrics`, read in one snapshot.
    public func snapshot() async throws -> ReplicaSnapshot {
        let atomicTables = self.atomicTables
        let tables = self.tables
        return try await pool.read { db in
            ReplicaSnapshot(
                outbox: try Outbox.summaries(db: db, atomicTables: atomicTables),
                openConflicts: try Self.openConflictCounts(db: db), lifecycle: try LifecycleLedger.all(db: db),
                objectTotals: try Self.objectTotals(db: db), objectUploads: try Self.objectUploadSummaries(db: db),
                cloudCursors: try Self.cloudCursors(tables: tables, db: db), filling: try ColumnFill.all(db: db))
        }
    }
}
