import DallyCore
import DallyScheduler
import DallyStore

/// What the syncer has done since start, for `/stats`.
public struct SyncStatus: Sendable {
    public var cycles: Int64 = 0
    public var batchesSent: Int64 = 0
    public var batchesResent: Int64 = 0
    public var pulls: Int64 = 0
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
    /// Compression dictionaries the cloud acknowledged.
    public var dictionariesUploaded: Int64 = 0
    /// Object transfers both ways.
    public var objects = ObjectTransferCounters()
    /// Per table: deadlines that passed while no uplink the table may use was available.
    public var deadlineMisses: [String: Int64] = [:]
    /// Whether the scheduler is waiting (nothing to do now), and when it plans to wake next
    /// (milliseconds since 1970; nil: only when something changes).
    public var idle = false
    public var nextWakeAt: Int64?

    mutating func record(_ report: SyncReport) {
        rowsSent += Int64(report.sent)
        rowsAccepted += Int64(report.accepted)
        conflicts += Int64(report.conflicts)
        rejected += Int64(report.rejected)
        rowsReceived += Int64(report.received)
    }

    mutating func record(_ traffic: CloudClient.Traffic) {
        bytesSentRaw += Int64(traffic.sentRaw)
        bytesSentCompressed += Int64(traffic.sentCompressed)
        bytesReceived += Int64(traffic.received)
    }
}

/// What the syncer moved of objects since start.
public struct ObjectTransferCounters: Sendable, Equatable {
    /// Objects the cloud acknowledged whole.
    public var uploaded: Int64 = 0
    /// Chunks sent, their bytes, and those bytes as they went on the wire (compressed or not).
    public var chunksSent: Int64 = 0
    public var chunkBytesSent: Int64 = 0
    public var chunkBytesOnWire: Int64 = 0
    /// Chunk hashes named in missing-chunks asks (a resumed walk asks only about the chunks
    /// not known to be there).
    public var chunksAsked: Int64 = 0
    /// Chunks the cloud already had when asked, and their bytes: what chunk reuse saved.
    public var chunksSkipped: Int64 = 0
    public var bytesSkipped: Int64 = 0
    /// Uploads that went on from where an earlier, interrupted walk stopped (a drop, a
    /// restart, a switch of uplink), and the chunk bytes they did not send again.
    public var resumedTransfers: Int64 = 0
    public var bytesNotResent: Int64 = 0
    /// Uploads dropped before or during their walk because no row wanted the object any more
    /// and no row naming it had left (a photo retaken before Wi-Fi came).
    public var withdrawn: Int64 = 0
    /// Object walks paused between chunks for rows due on another uplink (each resumes later).
    public var walksPaused: Int64 = 0
    /// Objects fetched from the cloud (by download policy, on demand, or with an atomic row),
    /// and the chunks and bytes that took.
    public var fetched: Int64 = 0
    public var chunksFetched: Int64 = 0
    public var bytesFetched: Int64 = 0
    public var onDemandFetches: Int64 = 0
    public var fetchFailures: Int64 = 0

    var counters: [(String, Int64)] {
        [
            ("objects_uploaded", uploaded), ("object_chunks_asked", chunksAsked), ("object_chunks_sent", chunksSent),
            ("object_chunk_bytes_sent", chunkBytesSent), ("object_chunk_bytes_on_wire", chunkBytesOnWire),
            ("object_chunks_skipped", chunksSkipped), ("object_bytes_skipped", bytesSkipped),
            ("object_resumed_transfers", resumedTransfers), ("object_bytes_not_resent", bytesNotResent),
            ("object_uploads_withdrawn", withdrawn), ("object_walks_paused", walksPaused),
            ("objects_fetched", fetched), ("object_chunks_fetched", chunksFetched),
            ("object_bytes_fetched", bytesFetched), ("object_on_demand_fetches", onDemandFetches),
            ("object_fetch_failures", fetchFailures),
        ]
    }
}

/// The outcome of a sync-now request.
public enum SyncOutcome: Sendable {
    /// The cycle completed: what it sent and received.
    case synced(SyncReport)
    /// The cycle failed; the changes stay queued and are retried with backoff.
    case queued(String)
}

/// What the HTTP routes and stats need of a running syncer, whatever its clock.
public protocol SyncControl: Sendable {
    /// Sends the table's pending changes and pulls it now, over the networks its policy allows.
    func syncNow(table: String) async -> SyncOutcome
    var status: SyncStatus { get }
    var uplinkSnapshots: [UplinkSnapshot] { get }
    var tableSchedules: [String: TableSchedule] { get }
    func setAvailability(uplink: String, to mode: AvailabilityOverride) throws(DallyError) -> UplinkSnapshot
    /// Whether the decision loop waits with nothing to do until its planned time or a change.
    var isQuiet: Bool { get }
}

/// One uplink's state and counters at the moment of asking.
public struct UplinkSnapshot: Sendable {
    public let name: String
    public let networkClass: String
    public let url: String
    public let override: AvailabilityOverride
    /// Up by override or probe; usable also means not waiting out a retry backoff.
    public let available: Bool
    public let usable: Bool
    /// Milliseconds since 1970 when a backoff ends.
    public let retryAt: Int64?
    public let eager: Bool
    /// Name and value of each counter (`wake_ups`, `requests`, `bytes_up`, …).
    public let counters: [(String, Int64)]

    /// `{"name":…,"class":…,"availability":"auto","available":true,…,"wake_ups":…}`.
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"name\":")
        writer.string(name)
        writer.raw(",\"class\":")
        writer.string(networkClass)
        writer.raw(",\"url\":")
        writer.string(url)
        writer.raw(",\"availability\":")
        writer.string(override.rawValue)
        writer.raw(",\"available\":")
        writer.bool(available)
        writer.raw(",\"usable\":")
        writer.bool(usable)
        writer.raw(",\"retry_at\":")
        if let retryAt { writer.int(retryAt) } else { writer.null() }
        writer.raw(",\"eager\":")
        writer.bool(eager)
        for (name, value) in counters {
            writer.raw(",")
            writer.key(name)
            writer.int(value)
        }
        writer.raw("}")
    }
}

/// A table's schedule at the moment of asking: its delay and the deadlines it missed.
public struct TableSchedule: Sendable {
    public let maxDelayMs: Int64
    public let deadlineMisses: Int64
}

extension SyncStatus {
    /// The entries of ``counters`` that are levels, not counts since start: gauges in Prometheus.
    static let levels: Set<String> = ["consecutive_failures", "notify_connected"]

    /// Name and value of every counter, for Prometheus (`dally_sync_<name>_total`, or
    /// `dally_sync_<name>` for the ``levels``).
    var counters: [(String, Int64)] {
        [
            ("cycles", cycles), ("batches_sent", batchesSent), ("batches_resent", batchesResent), ("pulls", pulls),
            ("rows_sent", rowsSent), ("rows_accepted", rowsAccepted), ("conflicts", conflicts),
            ("rows_rejected", rejected), ("rows_received", rowsReceived), ("bytes_sent_raw", bytesSentRaw),
            ("bytes_sent_compressed", bytesSentCompressed), ("bytes_received", bytesReceived),
            ("failures", failures), ("consecutive_failures", Int64(consecutiveFailures)),
            ("notifications", notifications), ("notify_connected", notifyConnected ? 1 : 0),
            ("dictionaries_uploaded", dictionariesUploaded),
        ] + objects.counters
    }

    /// `{"cycles":…, …, "last_success_at":…, "last_error":…, "open_conflicts":…}`.
    func write(to writer: inout JSONWriter, openConflicts: Int64) {
        writer.raw("{")
        for (name, value) in counters {
            writer.key(name)
            writer.int(value)
            writer.raw(",")
        }
        writer.raw("\"compression_ratio\":")
        if bytesSentCompressed > 0 { writer.double(Double(bytesSentRaw) / Double(bytesSentCompressed)) } else { writer.null() }
        writer.raw(",\"last_success_at\":")
        if let lastSuccessAt { writer.int(lastSuccessAt) } else { writer.null() }
        writer.raw(",\"last_error\":")
        if let lastError { writer.string(lastError) } else { writer.null() }
        writer.raw(",\"open_conflicts\":")
        writer.int(openConflicts)
        writer.raw(",\"idle\":")
        writer.bool(idle)
        writer.raw(",\"next_wake_at\":")
        if let nextWakeAt { writer.int(nextWakeAt) } else { writer.null() }
        writer.raw("}")
    }
}
