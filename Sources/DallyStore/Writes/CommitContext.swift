

/// What the operations of one group commit have done so far: the sequence numbers they took
/// and how they changed each table's counts. Applied to the store's state only after the
/// transaction commits, so a rolled-back operation leaves no trace.
public struct CommitContext: Sendable {
    /// The last local sequence number taken.
    public internal(set) var lastSeq: Int64
    /// Wall-clock time of this commit, milliseconds since 1970.
    public let now: Int64
    /// Per table: the highest sequence number written in this commit.
    public internal(set) var touched: [String: Int64] = [:]
    /// Per table: changes to live rows, tombstones and writes.
    var deltas: [String: TableCounts] = [:]
    /// Per table: what this commit added to the outbox.
    public internal(set) var outbox: [String: Outbox.Growth] = [:]
    /// Per table: the columns whose downstream values the replica could not hold.
    public internal(set) var notHeld: [String: Set<String>] = [:]

    init(lastSeq: Int64, now: Int64) {
        self.lastSeq = lastSeq
        self.now = now
    }

    /// Takes the next local sequence number for a change to `table`.
    mutating func nextSeq(for table: String) -> Int64 {
        lastSeq += 1
        touched[table] = lastSeq
        return lastSeq
    }

    mutating func recordPending(_ table: String, bytes: Int, firstDirtyAt: Int64?) {
        outbox[table, default: Outbox.Growth()].add(bytes: Int64(bytes), firstDirtyAt: firstDirtyAt)
    }

    /// Notes a value the cloud sent for `column` that its type here cannot hold.
    mutating func noteNotHeld(_ table: String, column: String) {
        notHeld[table, default: []].insert(column)
        count(table, notHeld: 1)
    }

    mutating func count(_ table: String, live: Int64 = 0, tombstones: Int64 = 0, writes: Int64 = 0, coalesced: Int64 = 0, notHeld: Int64 = 0) {
        deltas[table, default: TableCounts()].add(
            TableCounts(live: live, tombstones: tombstones, writes: writes, coalesced: coalesced, notHeld: notHeld))
    }
}
