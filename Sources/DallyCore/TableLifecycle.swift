/// How long a table's data lives and how much of it may wait: tombstone compaction, local
/// retention and the bound on its outbox (`tombstone_ttl`, `retain`, `max_pending`,
/// `max_pending_bytes`, `on_full` in a `[[tables]]` block).
///
/// For example, telemetry that the box keeps a week and never lets pile up past 100,000
/// unsent rows, dropping the oldest when it would:
///
/// ```swift
/// TableLifecycle(retain: .seconds(7 * 86_400), maxPendingRows: 100_000, onFull: .dropOldest)
/// ```
public struct TableLifecycle: Sendable, Hashable {
    /// What a write does when the table's outbox is at its bound.
    public enum OnFull: String, Sendable, CaseIterable {
        /// The write is refused (`507 insufficient_storage`) and nothing of it is saved.
        case reject
        /// The oldest waiting changes of the table are dropped to make room, and counted.
        case dropOldest = "drop_oldest"
    }

    /// A tombstone older than this is purged once every active reader has moved past it.
    public var tombstoneTTL: Duration
    /// Synced rows older than this are removed from the local replica (the cloud keeps them);
    /// nil keeps them for ever.
    public var retain: Duration?
    /// The most rows, and the most estimated wire bytes, the outbox may hold for this table.
    public var maxPendingRows: Int64?
    public var maxPendingBytes: Int64?
    public var onFull: OnFull

    /// Thirty days: a gateway offline for less than this catches up without a resync.
    public static let defaultTombstoneTTL: Duration = .seconds(30 * 86_400)

    public init(
        tombstoneTTL: Duration = TableLifecycle.defaultTombstoneTTL, retain: Duration? = nil,
        maxPendingRows: Int64? = nil, maxPendingBytes: Int64? = nil, onFull: OnFull = .reject
    ) {
        self.tombstoneTTL = tombstoneTTL
        self.retain = retain
        self.maxPendingRows = maxPendingRows
        self.maxPendingBytes = maxPendingBytes
        self.onFull = onFull
    }

    /// Whether the outbox of this table has a bound at all.
    public var isBounded: Bool { maxPendingRows != nil || maxPendingBytes != nil }

    /// Whether an outbox holding `rows` entries of `bytes` is at or past a bound, so that one
    /// more entry of `adding` bytes would not fit.
    public func isFull(rows: Int64, bytes: Int64, adding: Int64) -> Bool {
        if let maxPendingRows, rows + 1 > maxPendingRows { return true }
        if let maxPendingBytes, bytes + adding > maxPendingBytes { return true }
        return false
    }
}
