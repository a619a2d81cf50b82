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
        /// Downstream pages read from the store for gateways, and pages served from another
        /// gateway's read of the same cursor (``SharedPages``).
        var pageReads: Int64 = 0
        var pagesShared: Int64 = 0
        /// Pages sent inside notify answers.
        var inlinePages: Int64 = 0
        /// Changes stamped too far ahead of the cloud's clock, taken as made on arrival.
        var clockAhead: Int64 = 0
    }

    private let counts = Mutex(Snapshot())
    private let registry: PrometheusCollectorRegistry
    /// Counters a gateway's every notify answer touches, made once: the registry checks a
    /// counter's name and help text on each lookup.
    private let pagesRead: Counter
    private let pagesShared: Counter
    private let inlinePages: Counter

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        let pages = "Downstream pages served to gateways, by whether the store was read for it or another gateway's read was shared."
        pagesRead = registry.counter("dally_cloud_downstream_pages_total", help: pages, labels: [("source", "read")])
        pagesShared = registry.counter("dally_cloud_downstream_pages_total", help: pages, labels: [("source", "shared")])
        inlinePages = registry.counter("dally_cloud_inline_pages_total", help: "Downstream pages sent inside notify answers.")
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
        registry.counter("dally_cloud_batches_total", help: "Upload batches applied.")
            .increment(by: Int64(delta.batches))
        registry.counter("dally_cloud_batches_replayed_total", help: "Upload batches answered again from the batch log (retries).")
            .increment(by: delta.replayed)
        let rows = "Rows received in batches, by result (accepted, conflict, rejected)."
        registry.counter("dally_cloud_rows_total", help: rows, labels: [("result", "accepted")])
            .increment(by: delta.rowsAccepted)
        registry.counter("dally_cloud_rows_total", help: rows, labels: [("result", "conflict")])
            .increment(by: delta.conflicts)
        registry.counter("dally_cloud_rows_total", help: rows, labels: [("result", "rejected")])
            .increment(by: delta.rejected)
        registry.counter("dally_cloud_downstream_rows_total", help: "Rows served to gateways in downstream pages.")
            .increment(by: delta.downstreamRows)
        registry.counter("dally_cloud_batch_body_bytes_total", help: "Bytes of upload batch bodies received, as sent (compressed).")
            .increment(by: delta.bodyBytes)
    }

    /// Changes from `gateway` whose writer's clock was too far ahead of the cloud's.
    func recordClockAhead(_ ahead: BatchRequest.ClockedAhead, from gateway: String) {
        guard ahead.changes > 0 else { return }
        counts.withLock { $0.clockAhead += Int64(ahead.changes) }
        registry.counter(
            "dally_cloud_clock_ahead_changes_total",
            help: "Changes stamped past [batches] max_clock_ahead ahead of the cloud's clock, taken as made on arrival.",
            labels: [("gateway", gateway)]
        ).increment(by: Int64(ahead.changes))
    }

    func recordPage(shared: Bool) {
        counts.withLock { shared ? ($0.pagesShared += 1) : ($0.pageReads += 1) }
        (shared ? pagesShared : pagesRead).increment()
    }

    func recordInline(pages: Int) {
        counts.withLock { $0.inlinePages += Int64(pages) }
        inlinePages.increment(by: Int64(pages))
    }

    var snapshot: Snapshot { counts.withLock { $0 } }
}
