import DallyObjects

/// How many objects the replica knows and how many of them are whole here.
public struct ObjectTotals: Sendable, Equatable {
    public let objects: Int64
    public let local: Int64
}
