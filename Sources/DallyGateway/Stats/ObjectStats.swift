import DallyCore
import DallyStore

/// `/stats` `objects`: what the replica and the chunk store hold, the receive and GC counters,
/// and the uploads waiting by table and by network class.
struct ObjectStats: Encodable {
    let totals: ObjectTotals
    let chunks: (chunks: Int, bytes: Int64)
    /// Receives under way.
    let receiving: Int
    let counters: ObjectCounters.Snapshot
    let backlog: ObjectBacklog
    /// ms since 1970, for ages.
    let now: Int64

    /// One table's objects waiting to go up.
    struct Pending: Encodable {
        let objects: Int64
        let bytes: Int64
        let oldestAgeMs: Int64?
        let networks: [String]

        func encode(to encoder: any Encoder) throws {
            var object = encoder.container(keyedBy: CodingName.self)
            try object.encode(objects, for: "objects")
            try object.encode(bytes, for: "bytes")
            try object.encode(oldestAgeMs, for: "oldest_age_ms")
            try object.encode(networks, for: "networks")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(counters: [
            ("objects", totals.objects), ("local_objects", totals.local), ("chunks", Int64(chunks.chunks)),
            ("chunk_bytes", chunks.bytes), ("receiving", Int64(receiving)), ("refused_uploads", totals.refused),
        ])
        try object.encode(counters: counters.fields.map { ($0.name, $0.value) })
        try object.encode(
            entries: backlog.summaries.map { summary in
                (summary.table, Pending(
                    objects: summary.objects, bytes: summary.bytes,
                    oldestAgeMs: summary.oldestFirstDirtyAt.map { max(0, now - $0) },
                    networks: backlog.policies[summary.table]?.uploadObjects.networks ?? []))
            },
            for: "pending")
        try object.encode(entries: backlog.bytesByClass.sorted { $0.key < $1.key }, for: "pending_by_class")
    }
}
