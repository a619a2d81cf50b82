/// The kinds of sync work that take SQLite's writer, each in short transactions of its own
/// (``GroupCommit``), timed apart in ``WriterTimings``.
public enum SyncStep: String, Sendable, Hashable, CaseIterable {
    /// Recording a new batch as in flight (its body and its rows' sequence numbers).
    case recordBatch = "record_batch"
    /// Applying a piece of a batch's answer: versions, outbox entries, conflicts.
    case applyAnswer = "apply_answer"
    /// Ending a batch's flight once its answer is applied, or abandoning it.
    case endFlight = "end_flight"
    /// Applying a piece of a downstream page, with the table's cursor.
    case applyPage = "apply_page"
    /// Object transfer bookkeeping: an upload done, a fetched object recorded.
    case objects
    /// Upkeep: purging old tombstones, removing retained rows, a resync's end.
    case upkeep

    /// Whether the protocol redoes this step after a crash that lost it, so that its commit
    /// need not reach the disk before the next: a lost answer piece leaves its batch in flight
    /// (resent, answered again from the cloud's record, the rest applied); a lost page piece
    /// leaves the cursor behind (pulled again); a lost object note asks the cloud again. A
    /// batch's record is not redoable: nothing may leave the box that the replica does not
    /// remember sending.
    var isRedoable: Bool { self != .recordBatch }
}
