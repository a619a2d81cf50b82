import DallyCore
import GRDB

/// One page of rows in local-sequence order.
///
/// The cursor is tie-free: every change has its own sequence number, so `nextSince` (the
/// sequence of the last row on the page) resumes exactly after it, however many rows share a
/// timestamp.
public struct Page: Sendable {
    public var rows: [(table: String, row: StoredRow)]
    /// The cursor for the next page: the last row's sequence, or the query's `since` when empty.
    public var nextSince: Int64
    /// Whether more rows follow this page.
    public var more: Bool
    /// The sequences of the rows on the page that left the reader's filter: live rows that no
    /// longer match it but matched at the reader's cursor (see ``MoveLog``). Always empty
    /// unfiltered.
    public var left: Set<Int64> = []

    public init(rows: [(table: String, row: StoredRow)], nextSince: Int64, more: Bool) {
        self.rows = rows
        self.nextSince = nextSince
        self.more = more
    }
}
