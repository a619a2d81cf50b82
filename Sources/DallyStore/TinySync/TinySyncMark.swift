/// One TinySync answer's cursor: the time handed out as `last_synced` and the local sequence
/// its rows reached.
///
/// Every change with a sequence at or below `seq` was committed before `at`, so a client that
/// sends `at` back resumes after `seq`: exactly where its last answer stopped, however many
/// rows share a timestamp.
///
/// ```swift
/// let mark = TinySyncMark(at: 1_800_000_000_123, seq: 42)   // "2027-01-15T08:00:00.123Z" → after seq 42
/// ```
public struct TinySyncMark: Sendable, Equatable {
    /// Milliseconds since 1970, unique among marks.
    public let at: Int64
    /// The last local sequence number the answer covered.
    public let seq: Int64

    public init(at: Int64, seq: Int64) {
        self.at = at
        self.seq = seq
    }
}
