import DallyCore
import DallyObjects
import GRDB

/// A row write that set an `OBJECT` column to an object just received.
public struct ObjectWriteOutcome: Sendable {
    /// The row as stored.
    public let row: StoredRow
    /// Whether the write created the row (it did not exist, or was a tombstone).
    public let created: Bool
}
