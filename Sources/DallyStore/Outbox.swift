import DallyCore
import GRDB

/// The outbox: one entry per row with changes the cloud has not accepted.
///
/// The entry does not copy the row; the row table holds the pending state, so a later write to
/// the same row simply replaces it (coalescing). The entry keeps what the first write knew: the
/// cloud version the change is based on and the time the row first became dirty, from which
/// the scheduler computes the deadline.
public enum Outbox {
    static let upsert = """
        INSERT INTO dally_outbox (tbl, row_id, first_dirty_at, last_write_at, base_version, writes, bytes)
        VALUES (?, ?, ?, ?, ?, 1, ?)
        ON CONFLICT(tbl, row_id) DO UPDATE SET
            last_write_at = excluded.last_write_at, writes = writes + 1, bytes = excluded.bytes
        """

    /// Adds or refreshes the entry for a row just written.
    ///
    /// - Parameters:
    ///   - coalesced: whether the row was already dirty, so that an entry exists and this write
    ///     replaces its pending state (the replica keeps the invariant: a row of a synced table
    ///     has a null version exactly while it has an outbox entry).
    ///   - bytes: about how large the pending state is on the wire; it replaces the size of
    ///     the state it coalesces.
    ///   - previousSeq: the row's sequence number before this write, when it coalesces: a
    ///     batch in flight that may carry the row then counts its entries again
    ///     (``FlightSections/markTalliesStale(table:rowID:seq:db:)``).
    static func record(
        table: String, rowID: String, baseVersion: Int64?, coalesced: Bool, previousSeq: Int64? = nil, bytes: Int,
        db: Database, context: inout CommitContext
    ) throws {
        if coalesced { try FlightSections.markTalliesStale(table: table, rowID: rowID, seq: previousSeq, db: db) }
        try db.cachedStatement(sql: upsert).execute(values: [
            table.databaseValue, rowID.databaseValue, context.now.databaseValue, context.now.databaseValue,
            baseVersion?.databaseValue ?? .null, bytes.databaseValue,
        ])
        if coalesced { context.count(table, coalesced: 1) }
        context.recordPending(table, bytes: bytes, firstDirtyAt: coalesced ? nil : context.now)
    }

    /// Deletes `rowID`'s entry, if it has one, and uncounts it: from the totals and from the
    /// count of its first-dirty time; a batch in flight that may carry the row counts its
    /// entries again.
    ///
    /// Every delete of an entry goes through here, or through a settle's set-based statements
    /// (``AcceptedRows``): the outbox has no delete trigger since schema v14. A trigger, even one
    /// whose `WHEN` stands aside, makes SQLite delete in two passes and start the trigger's
    /// program for every row deleted: a settle cost a quarter less without it
    /// (docs/BENCHMARKS.md). Inserts and updates keep theirs (``ReplicaSchema``).
    ///
    /// - Parameters:
    ///   - previousSeq: the row's sequence number before this change, when known, to tell
    ///     which batches in flight may carry it
    ///     (``FlightSections/markTalliesStale(table:rowID:seq:db:)``).
    ///   - mayBeInFlight: false where the caller chose the row among those not in flight.
    static func remove(
        table: String, rowID: String, previousSeq: Int64? = nil, mayBeInFlight: Bool = true, db: Database
    ) throws {
        // Read, then deleted: `DELETE … RETURNING` would need SQLite 3.35, and these deletes
        // are the rare ones (conflicts, a downstream row over a dirty one, `drop_oldest`).
        guard let gone = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT first_dirty_at, bytes FROM dally_outbox WHERE tbl = ? AND row_id = ?"),
            arguments: [table, rowID])
        else { return }
        let at: Int64 = gone[0]
        let bytes: Int64 = gone[1]
        try db.cachedStatement(sql: "DELETE FROM dally_outbox WHERE tbl = ? AND row_id = ?").execute(arguments: [table, rowID])
        try db.cachedStatement(sql: "UPDATE dally_outbox_totals SET entries = entries - 1, bytes = bytes - ? WHERE tbl = ?")
            .execute(arguments: [bytes, table])
        try db.cachedStatement(sql: "DELETE FROM dally_outbox_ages WHERE tbl = ? AND at = ? AND entries = 1")
            .execute(arguments: [table, at])
        try db.cachedStatement(sql: "UPDATE dally_outbox_ages SET entries = entries - 1 WHERE tbl = ? AND at = ?")
            .execute(arguments: [table, at])
        if mayBeInFlight { try FlightSections.markTalliesStale(table: table, rowID: rowID, seq: previousSeq, db: db) }
    }

    /// Which of `ids` (a JSON array of one table's row ids) have no entry in the outbox.
    static func withoutEntries(_ ids: String, table: String, db: Database) throws -> Set<String> {
        Set(
            try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT j.value FROM json_each(?) AS j
                        WHERE NOT EXISTS (SELECT 1 FROM dally_outbox o WHERE o.tbl = ? AND o.row_id = j.value)
                        """),
                arguments: [ids, table]))
    }

    /// The wire size the outbox weighs a row by: its id, its values and the fixed parts of a
    /// batch row (`[id, base, updated_at, "put", …]`).
    static func estimatedBytes(id: String, values: [Value]) -> Int {
        values.reduce(id.utf8.count + 40) { $0 + $1.wireSizeEstimate + 1 }
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

    /// What one commit added to a table's outbox, told to commit observers so that the
    /// scheduler can follow the outbox without querying it after every write.
    public struct Growth: Sendable, Equatable {
        /// Bytes of the pending states written; a coalescing write counts whole, so this is
        /// an upper bound on the outbox's growth.
        public var bytes: Int64 = 0
        /// Rows that became dirty.
        public var newEntries: Int64 = 0
        /// The first-dirty time of the earliest new entry.
        public var firstDirtyAt: Int64?

        public init() {}

        mutating func add(bytes: Int64, firstDirtyAt: Int64?) {
            self.bytes += bytes
            guard let firstDirtyAt else { return }
            newEntries += 1
            self.firstDirtyAt = min(self.firstDirtyAt ?? firstDirtyAt, firstDirtyAt)
        }
    }

    /// Depth, size and age of the outbox for one table.
    public struct Summary: Sendable, Equatable {
        public let table: String
        /// Entries waiting to be sent: neither parked nor in a batch in flight.
        public let pending: Int64
        /// Their estimated wire size.
        public let bytes: Int64
        /// Milliseconds since 1970 of their oldest first-dirty time, nil when none waits.
        public let oldestFirstDirtyAt: Int64?
        /// Entries in a batch in flight, and entries parked (by a conflict or an error).
        public let inFlight: Int64
        public let parked: Int64
        /// Rows of an `atomic_sync` table held back until their objects are in the cloud.
        public let held: Int64

        public init(
            table: String, pending: Int64, bytes: Int64, oldestFirstDirtyAt: Int64?, inFlight: Int64 = 0,
            parked: Int64 = 0, held: Int64 = 0
        ) {
            self.held = held
            self.table = table
            self.pending = pending
            self.bytes = bytes
            self.oldestFirstDirtyAt = oldestFirstDirtyAt
            self.inFlight = inFlight
            self.parked = parked
        }
    }

    /// Whether the outbox entry `o` is a row that references an object still waiting to go up:
    /// in an `atomic_sync` table such a row is held back, and travels once its objects are up.
    static let awaitsObjects = """
        EXISTS (SELECT 1 FROM dally_object_refs f JOIN dally_object_uploads u ON u.hash = f.hash
                WHERE f.tbl = o.tbl AND f.row_id = o.row_id)
        """

    /// Per table, the waiting entries' count, bytes and oldest first-dirty time, and how many
    /// are in flight, parked, or held back for their objects (rows of `atomicTables` whose
    /// objects have not gone up yet: those wait under the objects' policy, not the rows').
    ///
    /// The totals come from `dally_outbox_totals` and the ages from `dally_outbox_ages`, both
    /// kept by the outbox's insert and update triggers and by what deletes an entry
    /// (``remove(table:rowID:db:)``, ``AcceptedRows``); only the entries that do not wait (in
    /// flight, parked, held: a few batches' worth) are counted from the outbox
    /// (``StalledEntries``), by first-dirty time only among the oldest times. So the cost
    /// follows the tables and the rows under way, not the backlog: a million pending rows
    /// answer as fast as ten.
    static func summaries(db: Database, atomicTables: [String] = []) throws -> [Summary] {
        var totals: [String: (entries: Int64, bytes: Int64)] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT tbl, entries, bytes FROM dally_outbox_totals WHERE entries > 0")) {
            totals[row[0]] = (row[1], row[2])
        }
        guard !totals.isEmpty else { return [] }
        var summaries: [Summary] = []
        for (table, total) in totals.sorted(by: { $0.key < $1.key }) {
            let atomic = atomicTables.contains(table)
            let ages = try oldestAges(table, limit: agesRead, db: db)
            var stalls = try StalledEntries.read(
                table, atomic: atomic, countedThrough: ages.last?.at ?? Int64.min, db: db)
            let pending = max(0, total.entries - stalls.entries)
            var oldest: Int64?
            if pending > 0 {
                oldest = ages.first { $0.entries > stalls.countsByAge[$0.at, default: 0] }?.at
                if oldest == nil, ages.count == agesRead {
                    // Every one of the oldest times is under way: count them all, and read as
                    // many times as there are counted, and one more (rare: a small outbox
                    // nearly all in flight).
                    stalls = try StalledEntries.read(table, atomic: atomic, countedThrough: Int64.max, db: db)
                    oldest = try oldestAges(table, limit: stalls.countsByAge.count + 1, db: db)
                        .first { $0.entries > stalls.countsByAge[$0.at, default: 0] }?.at
                }
            }
            summaries.append(
                Summary(
                    table: table, pending: pending, bytes: max(0, total.bytes - stalls.bytes), oldestFirstDirtyAt: oldest,
                    inFlight: stalls.inFlight, parked: stalls.parked, held: stalls.held))
        }
        return summaries
    }

    /// How many of a table's oldest first-dirty times a summary reads first: the oldest
    /// waiting entry is nearly always at one of them.
    static let agesRead = 64

    /// `table`'s `limit` oldest first-dirty times with how many entries each has, oldest first.
    private static func oldestAges(_ table: String, limit: Int, db: Database) throws -> [(at: Int64, entries: Int64)] {
        try Row.fetchAll(
            db.cachedStatement(sql: "SELECT at, entries FROM dally_outbox_ages WHERE tbl = ? ORDER BY at LIMIT ?"),
            arguments: [table, limit]
        ).map { ($0[0], $0[1]) }
    }

    /// The entries and estimated bytes `table`'s outbox holds, all states together: what
    /// its bound (``TableLifecycle``) is weighed against.
    static func totals(_ table: String, db: Database) throws -> (entries: Int64, bytes: Int64) {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT entries, bytes FROM dally_outbox_totals WHERE tbl = ?"), arguments: [table])
        return row.map { ($0[0], $0[1]) } ?? (0, 0)
    }
}
