/// One table's rows in a new batch, as ``FlightSections`` records them.
struct PlannedSection: Sendable {
    let table: String
    /// In the order read, and as a JSON array (``JSONRows/strings(_:)``).
    let ids: [String]
    let json: String
    let lowest: String
    let highest: String
    /// What their outbox entries held when read.
    let tally: FlightTally
    /// Whether `tally` may no longer match the entries (rows left out since it was counted).
    var tallyStale = false
    /// How many of the table's pending changes `drop_oldest` had dropped when the plan read
    /// them (``LifecycleLedger/droppedOnFull(_:db:)``); nil for a table that never drops.
    var droppedOnFull: Int64?

    /// The section of `ids` (in the order read) of `table`; nil when there are none.
    init?(table: String, ids: [String], tally: FlightTally, droppedOnFull: Int64?) {
        guard let lowest = ids.min(), let highest = ids.max() else { return nil }
        (self.table, self.ids, self.json, self.lowest, self.highest) = (table, ids, JSONRows.strings(ids), lowest, highest)
        (self.tally, self.droppedOnFull) = (tally, droppedOnFull)
    }
}
