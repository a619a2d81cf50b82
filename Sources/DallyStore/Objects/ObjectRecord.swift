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

/// An object queued for upload: the cloud may lack it and a row of a synced table names it.
public struct ObjectUpload: Sendable, Equatable {
    public let hash: ContentHash
    /// The table whose `upload_objects` policy it travels under.
    public let table: String
    /// When a row first referenced it while the cloud lacked it (ms since 1970).
    public let firstDirtyAt: Int64
    public let size: Int64
    public let bytesSent: Int64
    public let attempts: Int64
}

/// An object queued for download under its table's `download_objects` policy.
public struct ObjectDownload: Sendable, Equatable {
    public let hash: ContentHash
    public let table: String
    /// When a downstream row first referenced it while it was not here (ms since 1970).
    public let queuedAt: Int64
}

/// Which row column references which object: a row of `dally_object_refs`.
public struct ObjectRef: Sendable, Hashable {
    public let table: String
    public let rowID: String
    public let column: String
    public let hash: ContentHash
}

/// How many objects the replica knows and how many of them are whole here.
public struct ObjectTotals: Sendable, Equatable {
    public let objects: Int64
    public let local: Int64
}
