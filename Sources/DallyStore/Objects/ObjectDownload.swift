import DallyObjects

/// An object queued for download under its table's `download_objects` policy.
public struct ObjectDownload: Sendable, Equatable {
    public let hash: ContentHash
    public let table: String
    /// When a downstream row first referenced it while it was not here (ms since 1970).
    public let queuedAt: Int64
}
