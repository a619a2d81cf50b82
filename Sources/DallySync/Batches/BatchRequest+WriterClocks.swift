extension BatchRequest {
    /// What ``limitWriterClocks(to:arrival:)`` changed.
    public struct ClockedAhead: Sendable, Equatable {
        /// Changes stamped past the limit.
        public var changes = 0
        /// How far the latest of them was ahead of the arrival, in milliseconds.
        public var aheadMs: Int64 = 0
    }

    /// Takes every change stamped later than `latest` as stamped at `arrival`.
    ///
    /// `last_writer_wins` compares the writers' clocks (`updated_at`), and a gateway whose
    /// clock runs ahead (a real-time clock set wrong, no NTP) would otherwise win every
    /// conflict on the rows it writes until real time caught up with it, for years perhaps. A
    /// change cannot have been made after it reached the cloud, so its arrival bounds its
    /// time. A clock slightly ahead (within the margin `latest` leaves) keeps its stamps.
    ///
    /// ```swift
    /// let ahead = batch.limitWriterClocks(to: now + 60_000, arrival: now)
    /// if ahead.changes > 0 { … }   // the gateway's clock is ahead by ahead.aheadMs at least
    /// ```
    public mutating func limitWriterClocks(to latest: Int64, arrival: Int64) -> ClockedAhead {
        var ahead = ClockedAhead()
        for s in sections.indices {
            for c in sections[s].changes.indices where sections[s].changes[c].updatedAt > latest {
                ahead.changes += 1
                ahead.aheadMs = max(ahead.aheadMs, sections[s].changes[c].updatedAt - arrival)
                sections[s].changes[c].updatedAt = arrival
            }
        }
        return ahead
    }
}
