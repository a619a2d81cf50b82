import DallySync
import Prometheus
import Synchronization

/// What the cloud has done since it started, for `/stats` and `/metrics`.
final class CloudCounters: Sendable {
    struct Snapshot: Sendable {
        var batches: Int64 = 0
        var replayed: Int64 = 0
        var rowsAccepted: Int64 = 0
        var conflicts: Int64 = 0
        var rejected: Int64 = 0
        var downstreamRows: Int64 = 0
        var bodyBytes: Int64 = 0
    }

    private let counts = Mutex(Snapshot())
    private let registry: PrometheusCollectorRegistry

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func record(_ answer: BatchAnswer, bodyBytes: Int?) {
        var delta = Snapshot()
        delta.batches = 1
        delta.replayed = answer.replayed ? 1 : 0
        for section in answer.results where !answer.replayed {
            for row in section.rows {
                switch row {
                case .accepted: delta.rowsAccepted += 1
                case .conflict: delta.conflicts += 1
                case .rejected: delta.rejected += 1
                }
            }
        }
        delta.downstreamRows = Int64(answer.changes.reduce(0) { $0 + $1.rows.count })
        delta.bodyBytes = Int64(bodyBytes ?? 0)
        counts.withLock { total in
            total.batches += delta.batches
            total.replayed += delta.replayed
            total.rowsAccepted += delta.rowsAccepted
            total.conflicts += delta.conflicts
            total.rejected += delta.rejected
            total.downstreamRows += delta.downstreamRows
            total.bodyBytes += delta.bodyBytes
        }
        registry.makeCounter(name: "dally_cloud_batches_total").increment(by: Int64(delta.batches))
        registry.makeCounter(name: "dally_cloud_batches_replayed_total").increment(by: delta.replayed)
        registry.makeCounter(name: "dally_cloud_rows_total", labels: [("result", "accepted")]).increment(by: delta.rowsAccepted)
        registry.makeCounter(name: "dally_cloud_rows_total", labels: [("result", "conflict")]).increment(by: delta.conflicts)
        registry.makeCounter(name: "dally_cloud_rows_total", labels: [("result", "rejected")]).increment(by: delta.rejected)
        registry.makeCounter(name: "dally_cloud_downstream_rows_total").increment(by: delta.downstreamRows)
        registry.makeCounter(name: "dally_cloud_batch_body_bytes_total").increment(by: delta.bodyBytes)
    }

    var snapshot: Snapshot { counts.withLock { $0 } }
}
