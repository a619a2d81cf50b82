

/// Counts kept per table for stats.
public struct TableCounts: Sendable, Equatable {
    public var live: Int64 = 0
    public var tombstones: Int64 = 0
    /// Row writes committed since the process started.
    public var writes: Int64 = 0
    /// Writes that replaced a pending outbox entry instead of adding one, since start.
    public var coalesced: Int64 = 0

    public init(live: Int64 = 0, tombstones: Int64 = 0, writes: Int64 = 0, coalesced: Int64 = 0) {
        self.live = live
        self.tombstones = tombstones
        self.writes = writes
        self.coalesced = coalesced
    }

    mutating func add(_ other: TableCounts) {
        live += other.live
        tombstones += other.tombstones
        writes += other.writes
        coalesced += other.coalesced
    }
}
