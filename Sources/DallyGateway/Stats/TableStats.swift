import DallyCore
import DallyStore
import DallySync
import DallySyncEngine

/// `/stats` `tables.<name>`: the table's rows and writes, its outbox, and (when it syncs) its
/// schedule.
struct TableStats: Encodable {
    let counts: TableCounts
    let outbox: Outbox.Summary?
    let schedule: TableSchedule?
    let lifecycle: LifecycleLedger
    let bound: TableLifecycle
    /// The cloud version the table's pulls have reached; nil for a table that does not sync.
    let cloudVersion: Int64?
    /// Columns added to the table being filled from the cloud; its changes wait meanwhile.
    let filling: [String]
    /// How the table's declaration differs from the cloud's, when it does (a table whose
    /// types differ is held: it does not sync).
    let declaration: DeclarationDifference?
    /// ms since 1970, for ages and deadlines.
    let now: Int64

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(counters: [
            ("rows", counts.live), ("tombstones", counts.tombstones), ("writes", counts.writes),
            ("coalesced_writes", counts.coalesced), ("values_not_held", counts.notHeld), ("outbox_pending", outbox?.pending ?? 0),
            ("outbox_bytes", outbox?.bytes ?? 0), ("outbox_in_flight", outbox?.inFlight ?? 0),
            ("outbox_parked", outbox?.parked ?? 0), ("horizon", lifecycle.horizon),
            ("tombstones_purged", lifecycle.tombstonesPurged), ("retained_removed", lifecycle.retainedRemoved),
            ("dropped_on_full", lifecycle.droppedOnFull), ("resyncs", lifecycle.resyncs),
            ("cloud_removed", lifecycle.cloudRemoved),
        ])
        // The bound the outbox is weighed against (all its entries: waiting, in flight, parked).
        try object.encode(cloudVersion, for: "cloud_version")
        try object.encode(filling, for: "filling_columns")
        try object.encode(declaration.map(CloudDeclarationStats.init), for: "cloud_declaration")
        try object.encode(bound.maxPendingRows, for: "outbox_max_rows")
        try object.encode(bound.maxPendingBytes, for: "outbox_max_bytes")
        let oldest = outbox?.oldestFirstDirtyAt
        try object.encode(oldest.map { max(0, now - $0) }, for: "outbox_oldest_age_ms")
        guard let schedule else { return }
        try object.encode(schedule.maxDelayMs, for: "max_delay_ms")
        try object.encode(oldest.map { $0 + schedule.maxDelayMs - now }, for: "deadline_in_ms")
        try object.encode(schedule.deadlineMisses, for: "deadline_misses")
    }
}
