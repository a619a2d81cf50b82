import DallyCore

/// How a store turns its two reads of a scoped page into the page's rows: the rows in the
/// scope, and the rows the move log says were in it before a change after the cursor.
///
/// Shared by every backend so that a row is delivered, sent as `left`, or left out alike.
public enum ScopedRows {
    /// A row read by a store, with what its current values say about the scope.
    public struct Candidate: Sendable, Equatable {
        public var row: ChangePage.ChangedRow
        /// Whether the row's current values are in the scope (false for a tombstone).
        public var inScope: Bool

        public init(row: ChangePage.ChangedRow, inScope: Bool) {
            self.row = row
            self.inScope = inScope
        }
    }

    /// The rows of the page, in version order, at most `fetchLimit` (the store's `limit + 1`):
    /// rows in the scope as they are; a row that moved out and is still live as a `left` entry
    /// without values; a row that moved out by being deleted as its tombstone.
    ///
    /// Both inputs are in version order and each was cut at `fetchLimit`, so the first
    /// `fetchLimit` of their union are exact.
    public static func merge(inScope: [Candidate], movedOut: [Candidate], fetchLimit: Int) -> [ChangePage.ChangedRow] {
        var seen: Set<String> = []
        var merged: [ChangePage.ChangedRow] = []
        merged.reserveCapacity(min(fetchLimit, inScope.count + movedOut.count))
        for candidate in inScope + movedOut {
            guard seen.insert(candidate.row.id).inserted else { continue }
            var row = candidate.row
            if !candidate.inScope && !row.deleted {
                row.left = true
                row.values = []
            }
            merged.append(row)
        }
        merged.sort { $0.version < $1.version }
        return Array(merged.prefix(fetchLimit))
    }
}
