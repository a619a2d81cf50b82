import DallyCore
import DallyObjects
import GRDB

/// What one GC pass over the replica's objects did.
public struct ReplicaObjectCollection: Sendable {
    /// Objects deleted.
    public let collected: Int
    /// Every chunk a remaining manifest lists: what the chunk sweep must keep.
    public let listedChunks: Set<ContentHash>
}
