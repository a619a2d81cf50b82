import GRDB

/// The outbox: one entry per row with changes the cloud has not accepted.
///
/// The entry does not copy the row; the row table holds the pending state, so a later write to
/// the same row simply replaces it (coalescing). The entry keeps what the first write knew: the
/// cloud version the change is based on and the time the row first became dirty, from which
/// the scheduler computes the deadline.
public enum Outbox {
    static let upsert = """
        INSERT INTO dally_outbox (tbl, row_id, first_dirty_at, last_write_at, base_version, writes)
        VALUES (?, ?, ?, ?, ?, 1)
        ON CONFLICT(tbl, row_id) DO UPDATE SET last_write_at = excluded.last_write_at, writes = writes + 1
        """

    /// Adds or refreshes the entry for a row just written.
    ///
    /// - Parameter coalesced: whether the row was already dirty, so that an entry exists and
    ///   this write replaces its pending state (the replica keeps the invariant: a row of a
    ///   synced table has a null version exactly while it has an outbox entry).
    static func record(
        table: String, rowID: String, baseVersion: Int64?, coalesced: Bool, db: Database,
        context: inout CommitContext
    ) throws {
        try db.cachedStatement(sql: upsert).execute(arguments: [
            table, rowID, context.now, context.now, baseVersion,
        ])
        if coalesced { context.count(table, coalesced: 1) }
    }

    /// One pending entry, as the scheduler and stats see it.
    public struct Entry: Sendable, Equatable {
        public let table: String
        public let rowID: String
        /// Milliseconds since 1970 when the row first became dirty.
        public let firstDirtyAt: Int64
        public let lastWriteAt: Int64
        /// The cloud version the pending change is based on; nil for a row the cloud never had.
        public let baseVersion: Int64?
        /// How many local writes this entry stands for.
        public let writes: Int64
    }

    /// Depth and age of the outbox for one table.
    public struct Summary: Sendable, Equatable {
        public let table: String
        public let pending: Int64
        /// Milliseconds since 1970 of the oldest first-dirty time, nil when nothing is pending.
        public let oldestFirstDirtyAt: Int64?
    }
}
