import DallyObjects

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
