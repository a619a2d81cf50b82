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
}
