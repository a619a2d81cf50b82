

/// Counts kept per table for stats.
public struct TableCounts: Sendable, Equatable {
    public var live: Int64 = 0
    public var tombstones: Int64 = 0
    /// Row writes committed since the process started.
    public var writes: Int64 = 0
    /// Writes that replaced a pending outbox entry instead of adding one, since start.
    public var coalesced: Int64 = 0
    /// Values the cloud sent that the table's columns cannot hold (its configuration and the
    /// cloud's disagree on a column's type), left as they were, since start.
    public var notHeld: Int64 = 0

    public init(live: Int64 = 0, tombstones: Int64 = 0, writes: Int64 = 0, coalesced: Int64 = 0, notHeld: Int64 = 0) {
        self.live = live
        self.tombstones = tombstones
        self.writes = writes
        self.coalesced = coalesced
        self.notHeld = notHeld
    }

    mutating func add(_ other: TableCounts) {
        live += other.live
        tombstones += other.tombstones
        writes += other.writes
        coalesced += other.coalesced
        notHeld += other.notHeld
    }
}
