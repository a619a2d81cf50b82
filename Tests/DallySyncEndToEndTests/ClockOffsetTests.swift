import DallyCore
import DallyGateway
import Foundation
import Logging
import Testing

/// A gateway whose clock is off from the cloud's says so in `/stats` and `/metrics`
/// (``CloudClockOffset``): its changes, deadlines and ages all go by that clock.
@Suite("End to end: a gateway's clock against the cloud's")
struct ClockOffsetTests {
    @Test func aGatewayThreeHoursAheadReadsTheOffsetFromTheCloudsAnswers() async throws {
        try await SyncSystem.run(gateways: ["gw-b"]) { system in
            let ahead: Int64 = 3 * 3_600_000
            let gateway = try Gateway(
                config: try system.gatewayConfig("gw-a"), logger: Logger(label: "gw-a"),
                now: { Int64(Date().timeIntervalSince1970 * 1000) + ahead })
            try await system.live.startGateway("gw-a", gateway)
            #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"c"}}"#).status == 200)
            #expect(try await system.sync("gw-a").status == 200)

            let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            let offset = try #require(stats["sync"]?["cloud_clock_offset_ms"]?.int)
            // Whole seconds on the wire, and however long the request took.
            #expect(abs(offset + ahead) < 60_000, "\(offset)")
            let metrics = try await system.gateway("gw-a", .GET, "/metrics", token: SyncSystem.gatewayAdmin).body
            #expect(metrics.contains("dally_sync_cloud_clock_offset_seconds -10"), "\(metrics)")
            // A gateway on the cloud's clock reads about nothing.
            #expect(try await system.sync("gw-b").status == 200)
            let other = try await system.gateway("gw-b", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            #expect(abs(other["sync"]?["cloud_clock_offset_ms"]?.int ?? .max) < 60_000)
        }
    }
}
