import DallyCore
import DallySyncEngine

/// `/stats` `sync`: the engine's counters, then `compression_ratio`, `last_success_at`,
/// `last_error`, `open_conflicts`, `idle`, `next_wake_at`, `cloud_clock_offset_ms` and
/// `cloud_version`.
struct SyncStats: Encodable {
    let status: SyncStatus
    /// Conflicts recorded and not settled, over every table.
    let openConflicts: Int64

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(counters: status.counters)
        let ratio = status.bytesSentCompressed > 0
            ? Double(status.bytesSentRaw) / Double(status.bytesSentCompressed) : nil
        try object.encode(ratio, for: "compression_ratio")
        try object.encode(status.lastSuccessAt, for: "last_success_at")
        try object.encode(status.lastError, for: "last_error")
        try object.encode(openConflicts, for: "open_conflicts")
        try object.encode(status.idle, for: "idle")
        try object.encode(status.nextWakeAt, for: "next_wake_at")
        try object.encode(status.cloudClockOffsetMs, for: "cloud_clock_offset_ms")
        try object.encode(status.cloudVersion, for: "cloud_version")
    }
}
