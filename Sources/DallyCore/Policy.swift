/// How a table resolves a change whose base version is older than the cloud's current row.
public enum ConflictPolicy: String, Sendable, CaseIterable {
    /// The cloud's row stays; the incoming change is reported as a conflict and dropped.
    case serverWins = "server_wins"
    /// The incoming change replaces the cloud's row.
    case clientWins = "client_wins"
    /// The side with the later `updated_at` wins; ties go to the cloud.
    case lastWriterWins = "last_writer_wins"
    /// Both sides are kept and the conflict is listed until an app resolves it.
    case manual
}

/// When and over which networks a table's changes may travel to the cloud.
///
/// A change waits at most `maxDelay` after the row first became dirty, and only uplinks whose
/// network class is in `networks` may carry it.
public struct UploadPolicy: Sendable, Hashable {
    public var maxDelay: Duration
    public var networks: [String]

    public init(maxDelay: Duration, networks: [String]) {
        self.maxDelay = maxDelay
        self.networks = networks
    }
}

/// How stale the local copy of a table may get, and over which networks it may be refreshed.
public struct DownloadPolicy: Sendable, Hashable {
    public var period: Duration
    public var networks: [String]
    /// For objects only: fetch an object when a client reads it, rather than by `period`.
    public var onDemand: Bool

    public init(period: Duration, networks: [String], onDemand: Bool = false) {
        self.period = period
        self.networks = networks
        self.onDemand = onDemand
    }
}

/// The sync policies of one table: upload and download, for rows and for objects separately.
public struct SyncPolicy: Sendable, Hashable {
    /// A local-only table never leaves the box: no outbox entries, no downloads.
    public var localOnly: Bool
    /// Whether the cloud makes a row visible only with all of its objects complete.
    public var atomicSync: Bool
    public var uploadRows: UploadPolicy
    public var uploadObjects: UploadPolicy
    public var downloadRows: DownloadPolicy
    public var downloadObjects: DownloadPolicy

    public init(
        localOnly: Bool,
        atomicSync: Bool,
        uploadRows: UploadPolicy,
        uploadObjects: UploadPolicy,
        downloadRows: DownloadPolicy,
        downloadObjects: DownloadPolicy
    ) {
        self.localOnly = localOnly
        self.atomicSync = atomicSync
        self.uploadRows = uploadRows
        self.uploadObjects = uploadObjects
        self.downloadRows = downloadRows
        self.downloadObjects = downloadObjects
    }
}
