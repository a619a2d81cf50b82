import DallyHTTP
import Prometheus

/// Sets the cloud's gauges (and counters kept as totals) at each scrape of `/metrics`, from
/// what the node holds in memory and one read of the gateways' cursors: per table its version
/// and the tombstones compaction purged, per gateway how long since it last pulled and how many
/// versions of each table it is behind, the notify long-polls held against their limit.
///
/// What needs a scan of every row (a table's live rows and tombstones, objects, stored answers,
/// the store's size) stays in `/stats`, which an operator asks for: a scrape every few seconds
/// must not count a table of millions of rows each time.
///
/// A gateway silent for longer than a table's `tombstone_ttl` no longer holds that table's
/// tombstones back, and resyncs the table when it returns: alert on
/// `dally_cloud_gateway_last_seen_seconds` well before that.
///
/// ```swift
/// let export = CloudMetricsExport(registry: registry)
/// export.set(CloudMetricsExport.Levels(versions: store.versions, purged: compaction.purged,
///     gateways: gateways, notifyWaiting: hub.waiting, notifyLimit: hub.limit))
/// ```
struct CloudMetricsExport: Sendable {
    /// What one scrape exports.
    struct Levels {
        var versions: [String: Int64]
        var purged: [String: Int64]
        var gateways: [(String, CloudStatsDocument.Gateway)]
        var notifyWaiting: Int
        var notifyLimit: Int
    }

    let registry: PrometheusCollectorRegistry
    private let counters: CounterExport

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        self.counters = CounterExport(registry: registry)
    }

    func set(_ levels: Levels) {
        for (table, version) in levels.versions {
            let labels = [("table", table)]
            registry.gauge("dally_cloud_table_version", help: "The table's latest version.", labels: labels).set(version)
            counters.counter(
                "dally_cloud_table_tombstones_purged_total", help: "Tombstones purged by compaction since start.",
                labels: labels, value: levels.purged[table] ?? 0)
        }
        registry.gauge(
            "dally_cloud_gateways_never_seen",
            help: "Gateways of [[gateways]] that have neither pulled nor told their declarations."
        ).set(Int64(levels.gateways.filter { $0.1.lastSeenSecondsAgo == nil }.count))
        for (gateway, seen) in levels.gateways {
            if let lastSeen = seen.lastSeenSecondsAgo {
                registry.gauge(
                    "dally_cloud_gateway_last_seen_seconds", help: "Seconds since the gateway last pulled.",
                    labels: [("gateway", gateway)]
                ).set(lastSeen)
            }
            if let declaration = seen.declaration {
                registry.gauge(
                    "dally_cloud_gateway_declaration_differences",
                    help: "Tables the gateway declares otherwise than this node (columns it lacks or adds, types, scope), as it last told.",
                    labels: [("gateway", gateway)]
                ).set(Int64(declaration.differences.count))
            }
            for (table, lag) in seen.lag {
                registry.gauge(
                    "dally_cloud_gateway_cursor_lag",
                    help: "Versions of the table the gateway is behind the cloud, as of its last pull.",
                    labels: [("gateway", gateway), ("table", table)]
                ).set(lag)
            }
        }
        registry.gauge("dally_cloud_notify_waiters", help: "Notify long-polls held now.").set(Int64(levels.notifyWaiting))
        registry.gauge("dally_cloud_notify_waiters_limit", help: "Most notify long-polls held at once (limits.max_waiters).")
            .set(Int64(levels.notifyLimit))
    }
}
