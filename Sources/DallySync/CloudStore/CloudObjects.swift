import DallyObjects

/// What became of a manifest offered to the cloud's store.
public enum ObjectOffer: Sendable, Equatable {
    /// Recorded now: the object is complete in the cloud from this moment.
    case stored
    /// The cloud held the object already (a retried upload, or the same content from another
    /// gateway); the stored manifest is kept.
    case alreadyStored
    /// Chunks the manifest lists that the chunk store does not hold (now: the store checks
    /// again when it records the object, so that a collection running meanwhile cannot leave
    /// it without them). Nothing was recorded.
    case missing([ContentHash])
}

/// What one collection of unreferenced objects and unlisted chunks removed.
public struct ObjectCollection: Sendable, Equatable {
    public var objects: Int
    public var chunks: Int
    /// The bytes of the removed chunks.
    public var chunkBytes: Int64

    public init(objects: Int = 0, chunks: Int = 0, chunkBytes: Int64 = 0) {
        self.objects = objects
        self.chunks = chunks
        self.chunkBytes = chunkBytes
    }
}
