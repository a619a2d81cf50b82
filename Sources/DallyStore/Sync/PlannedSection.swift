/// One table's rows in a new batch, as ``FlightSections`` records them.
struct PlannedSection: Sendable {
    let table: String
    /// In the order read, and as a JSON array (``JSONRows/strings(_:)``).
    var ids: [String]
    var json: String
    var lowest: String
    var highest: String
    /// What their outbox entries held when read.
    let tally: FlightTally
    /// Whether `tally` may no longer match the entries (rows left out since it was counted).
    var tallyStale = false
    /// How many of the table's pending changes `drop_oldest` had dropped when the plan read
    /// them (``LifecycleLedger/droppedOnFull(_:db:)``); nil for a table that never drops.
    var droppedOnFull: Int64?
}
