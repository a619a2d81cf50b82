import DallyTestSupport
import Foundation
import Testing

/// `promtool check metrics` (Prometheus's own linter; `tools/deps.sh` installs it) accepts both
/// servers' `/metrics` after real traffic: writes, a sync, conflicts, pulls.
@Suite struct MetricsFormatTests {
    /// promtool, found on PATH. Missing is a failure, not a skip: the test command installs it.
    static var promtool: String? {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return paths.map { "\($0)/promtool" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func promtoolAcceptsTheGatewaysAndTheCloudsMetrics() async throws {
        let promtool = try #require(Self.promtool, "promtool is not on PATH: run tools/deps.sh")
        try await SyncSystem.run { system in
            // Stamped a day ahead: the cloud's counter of clocks ahead has a series to lint.
            let tomorrow = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
            _ = try await system.gateway(
                "gw-a", .PUT, "/v1/tables/orders/rows/m1", body: #"{"updated_at":\#(tomorrow),"values":{"customer":"Ada"}}"#)
            _ = try await system.gateway("gw-a", .POST, "/v1/tables/orders/sync")
            _ = try await system.gateway("gw-b", .POST, "/v1/tables/orders/sync")
            let gatewayMetrics = try await system.gateway("gw-a", .GET, "/metrics", token: SyncSystem.gatewayAdmin)
            let cloudMetrics = try await system.cloudRequest(
                .GET, "/metrics", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")])
            #expect(gatewayMetrics.status == 200)
            #expect(cloudMetrics.status == 200)
            #expect(gatewayMetrics.body.contains("dally_store_write_wait_seconds_bucket"))
            // Counts since start are counters named _total; levels stay gauges.
            let gateway = gatewayMetrics.body
            #expect(gateway.contains("# TYPE dally_sync_batches_sent_total counter"))
            #expect(gateway.contains("dally_sync_batches_sent_total 1"))
            #expect(gateway.contains("# TYPE dally_uplink_requests_total counter"))
            #expect(gateway.contains("# TYPE dally_table_writes_total counter"))
            #expect(gateway.contains(#"dally_table_writes_total{table="orders"} 1"#))
            #expect(gateway.contains("# TYPE dally_sync_consecutive_failures gauge"))
            #expect(gateway.contains("# TYPE dally_sync_cloud_clock_offset_seconds gauge"))
            #expect(!gateway.contains("# TYPE dally_sync_batches_sent gauge"))
            // Asked again, a counter does not count its growth twice.
            let again = try await system.gateway("gw-a", .GET, "/metrics", token: SyncSystem.gatewayAdmin)
            #expect(again.body.contains("dally_sync_batches_sent_total 1"))
            // What an operator alerts on in the cloud: each gateway's last pull and lag, per table.
            let cloud = cloudMetrics.body
            #expect(cloud.contains(#"dally_cloud_table_version{table="orders"} 1"#), "\(cloud)")
            #expect(cloud.contains("# TYPE dally_cloud_gateway_last_seen_seconds gauge"))
            #expect(cloud.contains(#"dally_cloud_gateway_last_seen_seconds{gateway="gw-b"} "#))
            #expect(cloud.contains(#"dally_cloud_gateway_cursor_lag{gateway="gw-b",table="orders"} 0"#))
            #expect(cloud.contains("# TYPE dally_cloud_table_tombstones_purged_total counter"))
            #expect(cloud.contains("# TYPE dally_cloud_notify_waiters_limit gauge"))
            #expect(cloud.contains(#"dally_cloud_clock_ahead_changes_total{gateway="gw-a"} 1"#))
            for (name, text) in [("gateway", gatewayMetrics.body), ("cloud", cloudMetrics.body)] {
                let (status, output) = try Self.check(text, with: promtool)
                #expect(status == 0, "promtool check metrics on the \(name)'s /metrics: \(output)")
                #expect(output.isEmpty, "promtool's lint on the \(name)'s /metrics: \(output)")
            }
        }
    }

    /// Runs `promtool check metrics` on `text`; its exit status and what it printed.
    static func check(_ text: String, with promtool: String) throws -> (Int32, String) {
        let (status, printed) = try SpawnedProcess.output(promtool, ["check", "metrics"], input: text, mergingErrors: true)
        return (status, printed.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
