import DallyObjects

/// What the replica knows of one object: a row of `dally_objects`.
public struct ObjectRecord: Sendable, Equatable {
    /// The reference rows store for it.
    public let reference: ObjectReference
    /// Its chunk list; nil while only a downloaded row's reference is known.
    public let manifest: ObjectManifest?
    /// Every chunk is in the chunk store, so the object can be served from this gateway.
    public let local: Bool
    /// The cloud holds it whole.
    public let inCloud: Bool
    /// When this replica learnt of it, or it was last uploaded (ms since 1970): GC's grace
    /// counts from here.
    public let createdAt: Int64

    public init(reference: ObjectReference, manifest: ObjectManifest?, local: Bool, inCloud: Bool, createdAt: Int64) {
        self.reference = reference
        self.manifest = manifest
        self.local = local
        self.inCloud = inCloud
        self.createdAt = createdAt
    }

    /// The object as it can be served now: its manifest, when every chunk is here.
    public var servable: ObjectManifest? { local ? manifest : nil }
}
