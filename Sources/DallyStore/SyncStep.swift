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
}
