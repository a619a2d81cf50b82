import DallyObjects

/// How many objects the replica knows and how many of them are whole here.
public struct ObjectTotals: Sendable, Equatable {
    public let objects: Int64
    public let local: Int64
    /// Objects the cloud refused to take (over its `objects.max_bytes`), waiting for the app to
    /// settle the records of the rows that name them.
    public let refused: Int64
}
