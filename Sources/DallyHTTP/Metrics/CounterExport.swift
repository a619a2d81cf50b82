import Prometheus
import Synchronization

/// Exports counts a server keeps as snapshots (since start, monotonic) as Prometheus
/// counters, so that `rate()` and counter resets work as Prometheus expects.
///
/// swift-prometheus's `Counter` only increments; each scrape increments it by what the count
/// grew since the last scrape. The last exported value per series is kept under one lock, held
/// while the counter is incremented, so two scrapes at once never count a growth twice.
///
/// For example:
///
/// ```swift
/// export.counter("dally_uplink_requests_total", help: "Requests sent over the uplink.",
///                labels: [("uplink", "lte")], value: snapshot.requests)
/// ```
public final class CounterExport: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let exported = Mutex<[String: Int64]>([:])

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Brings the counter `name` with `labels` up to `value`; a value below the last one
    /// exported (which a monotonic count never gives) is left for the counter to catch up with.
    public func counter(_ name: String, help: String, labels: [(String, String)] = [], value: Int64) {
        let key = ([name] + labels.map { "\($0.0)=\($0.1)" }).joined(separator: "\u{1F}")
        let counter = registry.counter(name, help: help, labels: labels)
        exported.withLock { exported in
            let last = exported[key] ?? 0
            guard value > last else { return }
            counter.increment(by: value - last)
            exported[key] = value
        }
    }
}
