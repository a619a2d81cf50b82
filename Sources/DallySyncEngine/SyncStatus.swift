import DallyCore
import DallySync

/// What the sync engine has done since start, for `/stats` and `/metrics`: assembled on
/// demand from the counters each part of the engine keeps.
public struct SyncStatus: Sendable {
    public var cycles: Int64 = 0
    public var batchesSent: Int64 = 0
    public var batchesResent: Int64 = 0
    public var pulls: Int64 = 0
    /// Batches that carried a pull asked while their wake went (a sync-now that came as its
    /// batches flew): no pull of its own followed.
    public var pullsRiding: Int64 = 0
    /// Pulls that went beside a wake's last batches on a long link instead of after them.
    public var pullsBeside: Int64 = 0
    public var rowsSent: Int64 = 0
    public var rowsAccepted: Int64 = 0
    public var conflicts: Int64 = 0
    public var rejected: Int64 = 0
    public var rowsReceived: Int64 = 0
    /// Request bodies before and after compression, and answer bodies as received.
    public var bytesSentRaw: Int64 = 0
    public var bytesSentCompressed: Int64 = 0
    public var bytesReceived: Int64 = 0
    public var failures: Int64 = 0
    public var consecutiveFailures = 0
    /// Milliseconds since 1970 of the last cycle that completed.
    public var lastSuccessAt: Int64?
    public var lastError: String?
    /// Whether the notify long-poll is currently held at the cloud.
    public var notifyConnected = false
    public var notifications: Int64 = 0
    /// Pages that came with a notification and were applied instead of a pull.
    public var inlinePages: Int64 = 0
    /// Compression dictionaries the cloud acknowledged.
    public var dictionariesUploaded: Int64 = 0
    /// Times the scheduler looked at the outbox and decided: after each cycle, each planned
    /// wake, and each write or event that could move the plan.
    public var decisions: Int64 = 0
    /// Sync-now requests waiting for their answer.
    public var requestsWaiting = 0
    /// Object transfers both ways.
    public var objects = ObjectTransferCounters()
    /// Per table: deadlines that passed while no uplink the table may use was available.
    public var deadlineMisses: [String: Int64] = [:]
    /// Whether the scheduler is waiting (nothing to do now), and when it plans to wake next
    /// (milliseconds since 1970; nil: only when something changes).
    public var idle = false
    public var nextWakeAt: Int64?
    /// The cloud's clock less the gateway's, in milliseconds, from the cloud's last answer
    /// (whole seconds on the wire); nil before one.
    public var cloudClockOffsetMs: Int64?
    /// The cloud's Dally version, as its declarations told (nil before, or from an older cloud).
    public var cloudVersion: String?
    /// Per table whose declaration differs from the cloud's, as last read (``DeclarationCheck``).
    public var declarationDifferences: [String: DeclarationDifference] = [:]
}

extension SyncStatus {
    /// The entries of ``counters`` that are levels, not counts since start: gauges in Prometheus.
    public static let levels: Set<String> = ["consecutive_failures", "notify_connected", "requests_waiting"]

    /// Name and value of every counter, for Prometheus (`dally_sync_<name>_total`, or
    /// `dally_sync_<name>` for the ``levels``).
    public var counters: [(String, Int64)] {
        [
            ("cycles", cycles), ("batches_sent", batchesSent), ("batches_resent", batchesResent), ("pulls", pulls),
            ("pulls_riding", pullsRiding), ("pulls_beside", pullsBeside),
            ("rows_sent", rowsSent), ("rows_accepted", rowsAccepted), ("conflicts", conflicts),
            ("rows_rejected", rejected), ("rows_received", rowsReceived), ("bytes_sent_raw", bytesSentRaw),
            ("bytes_sent_compressed", bytesSentCompressed), ("bytes_received", bytesReceived),
            ("failures", failures), ("consecutive_failures", Int64(consecutiveFailures)),
            ("notifications", notifications), ("inline_pages", inlinePages),
            ("notify_connected", notifyConnected ? 1 : 0),
            ("dictionaries_uploaded", dictionariesUploaded), ("decisions", decisions),
            ("requests_waiting", Int64(requestsWaiting)),
        ] + objects.counters
    }
}
