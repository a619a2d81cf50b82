import DallyObjects

/// Which row column references which object: a row of `dally_object_refs`.
public struct ObjectRef: Sendable, Hashable {
    public let table: String
    public let rowID: String
    public let column: String
    public let hash: ContentHash
}
