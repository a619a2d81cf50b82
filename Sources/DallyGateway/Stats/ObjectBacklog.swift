import DallyCore
import DallyStore

/// The objects waiting to go up, for `/stats`: per table, and per network class (the bytes
/// each class may carry: a class appears for every table whose `upload_objects` policy names
/// it, so a Wi-Fi-only backlog shows under `wifi` and not under `cellular`).
struct ObjectBacklog: Sendable {
    let summaries: [ObjectUploadSummary]
    let policies: [String: SyncPolicy]

    /// Bytes not yet sent, per class that may carry them.
    var bytesByClass: [String: Int64] {
        var totals: [String: Int64] = [:]
        for summary in summaries {
            for networkClass in policies[summary.table]?.uploadObjects.networks ?? [] {
                totals[networkClass, default: 0] += summary.bytes
            }
        }
        return totals
    }

    /// `"pending":{"photos":{"objects":n,"bytes":n,"oldest_age_ms":n,"networks":[…]}},"pending_by_class":{…}`
    func write(to w: inout JSONWriter, now: Int64) {
        w.raw("\"pending\":{")
        for (i, summary) in summaries.enumerated() {
            if i > 0 { w.raw(",") }
            w.key(summary.table)
            w.raw("{\"objects\":")
            w.int(summary.objects)
            w.raw(",\"bytes\":")
            w.int(summary.bytes)
            w.raw(",\"oldest_age_ms\":")
            if let oldest = summary.oldestFirstDirtyAt { w.int(max(0, now - oldest)) } else { w.null() }
            w.raw(",\"networks\":")
            w.value(.array((policies[summary.table]?.uploadObjects.networks ?? []).map { .string($0) }))
            w.raw("}")
        }
        w.raw("},\"pending_by_class\":{")
        for (i, (networkClass, bytes)) in bytesByClass.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { w.raw(",") }
            w.key(networkClass)
            w.int(bytes)
        }
        w.raw("}")
    }
}
