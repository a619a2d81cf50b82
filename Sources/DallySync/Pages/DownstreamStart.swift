/// Where the cloud starts a reader's page of a table, given the reader's cursor: from the
/// cursor, or from version 0 with the page marked `resync` (PROTOCOL.md §4.8).
///
/// A cursor behind the table's horizon would miss the tombstones purged after it, so the
/// reader could keep rows that were deleted; a cursor ahead of the table's version means the
/// cloud lost versions the reader holds (it was restored from an older backup). Either way the
/// reader pulls the table again from scratch; so does a reader whose cursor went back. A reader that says it is already doing so
/// (`resyncing`) pages on from its cursor.
///
/// ```swift
/// DownstreamStart(since: 40, tableVersion: 900, horizon: 120, resyncing: false)  // from 0, resync
/// DownstreamStart(since: 0, tableVersion: 900, horizon: 120, resyncing: false)   // from 0
/// ```
public struct DownstreamStart: Sendable, Equatable {
    /// The version to read after.
    public let from: Int64
    /// Whether the page must be marked `resync`.
    public let resync: Bool

    /// - Parameter regressed: the reader's cursor went back from one the cloud saw before (its
    ///   data directory was restored from a backup): it may lack its own later rows, which a
    ///   page from its cursor would leave out as its own.
    public init(since: Int64, tableVersion: Int64, horizon: Int64, resyncing: Bool, regressed: Bool = false) {
        if since > tableVersion || (regressed && !resyncing) {
            (from, resync) = (0, true)
        } else if !resyncing, since > 0, since < horizon {
            (from, resync) = (0, true)
        } else {
            (from, resync) = (since, false)
        }
    }

    /// Whether the page must include the reader's own rows: a reader pulling from scratch may
    /// have lost them (a restored data directory), and removes every clean row it is not sent.
    public func includesOwnRows(resyncing: Bool) -> Bool { resync || resyncing }
}
