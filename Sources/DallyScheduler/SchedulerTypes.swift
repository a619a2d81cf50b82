/// One table's sync rules as the scheduler sees them (rows; objects get their own rules).
public struct TableRules: Sendable, Equatable {
    public let name: String
    /// A local-only table never leaves the box: the scheduler ignores it.
    public let localOnly: Bool
    /// How long a change may wait, in milliseconds, and the classes it may travel over.
    public let maxDelay: Int64
    public let uploadNetworks: Set<String>
    /// How stale the local copy may get, in milliseconds, and the classes it may be refreshed over.
    public let period: Int64
    public let downloadNetworks: Set<String>

    public init(
        name: String, localOnly: Bool = false, maxDelay: Int64, uploadNetworks: Set<String>, period: Int64,
        downloadNetworks: Set<String>
    ) {
        self.name = name
        self.localOnly = localOnly
        self.maxDelay = maxDelay
        self.uploadNetworks = uploadNetworks
        self.period = period
        self.downloadNetworks = downloadNetworks
    }
}

/// One uplink as the scheduler sees it.
public struct UplinkRules: Sendable, Equatable {
    public let name: String
    public let networkClass: String
    /// The class's position in the configured cost order: lower is cheaper.
    public let cost: Int
    /// Send as soon as changes exist while this uplink is usable.
    public let eager: Bool

    public init(name: String, networkClass: String, cost: Int, eager: Bool = false) {
        self.name = name
        self.networkClass = networkClass
        self.cost = cost
        self.eager = eager
    }
}

/// What one table has waiting to go up: neither parked nor already in a batch in flight.
public struct PendingUploads: Sendable, Equatable {
    public var rows: Int64
    public var bytes: Int64
    /// Milliseconds since 1970 when the oldest waiting row first became dirty.
    public var oldestFirstDirtyAt: Int64?

    public init(rows: Int64, bytes: Int64, oldestFirstDirtyAt: Int64?) {
        self.rows = rows
        self.bytes = bytes
        self.oldestFirstDirtyAt = oldestFirstDirtyAt
    }
}

/// A batch in flight: the tables it carries both ways decide where it may be resent.
public struct FlightTables: Sendable, Equatable {
    public let uploads: [String]
    public let pulls: [String]

    public init(uploads: [String], pulls: [String]) {
        self.uploads = uploads
        self.pulls = pulls
    }
}

/// Everything the scheduler decides from, at one moment.
public struct Situation: Sendable, Equatable {
    /// Milliseconds since 1970.
    public var now: Int64
    /// Uplinks that may be used now: available, and not waiting out a retry backoff.
    public var usable: Set<String>
    /// Uplinks that are available but wait out a backoff, and until when.
    public var backingOff: [String: Int64]
    public var pending: [String: PendingUploads]
    /// Per table, the last time it was pulled; a table never pulled is due at once.
    public var pulledAt: [String: Int64]
    /// Tables a sync-now asked to send, and tables a sync-now or a notification asked to pull.
    public var urgentUploads: Set<String>
    public var urgentPulls: Set<String>
    public var inFlight: [FlightTables]

    public init(
        now: Int64, usable: Set<String>, backingOff: [String: Int64] = [:], pending: [String: PendingUploads] = [:],
        pulledAt: [String: Int64] = [:], urgentUploads: Set<String> = [], urgentPulls: Set<String> = [],
        inFlight: [FlightTables] = []
    ) {
        self.now = now
        self.usable = usable
        self.backingOff = backingOff
        self.pending = pending
        self.pulledAt = pulledAt
        self.urgentUploads = urgentUploads
        self.urgentPulls = urgentPulls
        self.inFlight = inFlight
    }
}

/// Why the scheduler woke an uplink.
public enum WakeReason: String, Sendable, Hashable, CaseIterable {
    /// A pending change reached its deadline.
    case deadline
    /// A table's pending bytes passed the size bound.
    case size
    /// A client asked to sync now.
    case syncNow = "sync_now"
    /// An eager uplink is up and changes exist.
    case eager
    /// A table's download period ran out.
    case period
    /// A notification or a sync-now asked for a pull.
    case pullRequested = "pull_requested"
    /// A batch in flight waits for its answer.
    case resend
}

/// Wake this uplink now; the cycle sends and pulls everything its class may carry.
public struct Wake: Sendable, Equatable {
    public let uplink: String
    public let reasons: Set<WakeReason>
}

/// The scheduler's answer.
public enum Decision: Sendable, Equatable {
    case wake(Wake)
    /// Nothing to do until this time (milliseconds since 1970), or until something changes.
    case sleep(until: Int64?)
}
