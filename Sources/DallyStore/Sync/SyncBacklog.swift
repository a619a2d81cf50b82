import GRDB

/// What the scheduler decides from, as the replica holds it: the outbox per table, the
/// batches in flight and the last pull of each table, read in one snapshot.
public struct SyncBacklog: Sendable {
    public let outbox: [Outbox.Summary]
    public let inFlight: [InFlight]
    /// Per table, milliseconds since 1970 of its last pull.
    public let pulledAt: [String: Int64]
    /// Per table, the objects waiting to go up.
    public let objectUploads: [ObjectUploadSummary]
    /// Per table, when its oldest queued object download was queued.
    public let objectDownloadsQueuedAt: [String: Int64]
}

extension ReplicaStore {
    /// The outbox, the batches in flight and the pull times, from one read transaction.
    public func syncBacklog() async throws -> SyncBacklog {
        let atomicTables = self.atomicTables
        return try await pool.read { db in
            // Changes a fill of added columns holds (``ColumnFill``) call for no upload; the
            // fill's pull is due at once.
            let filling = try ColumnFill.tables(db: db)
            return SyncBacklog(
                outbox: try Outbox.summaries(db: db, atomicTables: atomicTables).filter { !filling.contains($0.table) },
                inFlight: try Self.inFlight(db: db),
                pulledAt: try PullLog.times(db: db), objectUploads: try Self.objectUploadSummaries(db: db),
                objectDownloadsQueuedAt: try Self.objectDownloadsQueuedAt(db: db))
        }
    }
}
