import DallyCore
import DallyTestSupport
import Foundation
import Testing

/// A row too large for any batch the cloud takes (over its `limits.max_body_bytes`, 64 KiB in
/// ``SyncSystem``) is parked as a rejection the app can see and settle; it does not stop the
/// gateway's other changes from syncing.
@Suite struct OversizedRowTests {
    /// 300,000 characters of base64 from random bytes: zstd keeps ~¾ of them, over 64 KiB.
    static func incompressible() -> String {
        var random = SplitMix64(seed: 7)
        return Data((0..<225_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }).base64EncodedString()
    }

    @Test func aRowTooLargeForTheCloudIsParkedAndTheRestSyncs() async throws {
        try await SyncSystem.run { system in
            for id in ["a1", "big", "z1"] {
                let customer = id == "big" ? Self.incompressible() : "small \(id)"
                let put = try await system.gateway(
                    "gw-a", .PUT, "/v1/tables/orders/rows/\(id)", body: #"{"values":{"customer":"\#(customer)"}}"#)
                #expect(put.status == 200)
            }
            let synced = try await system.sync("gw-a")
            #expect(synced.status == 200, "\(synced.body)")
            #expect(synced.json["rejected"]?.int == 1)
            _ = try await system.awaitChange(on: "gw-b", table: "orders", "a1")
            _ = try await system.awaitChange(on: "gw-b", table: "orders", "z1")

            // The app is told, with what to do.
            let open = try await system.gateway("gw-a", .GET, "/v1/conflicts?table=orders")
            let record = try #require(open.json["conflicts"]?.array?.first)
            #expect(open.json["conflicts"]?.array?.count == 1)
            #expect(record["id"] == "big")
            #expect(record["kind"] == "error")
            #expect(record["status"] == "open")
            #expect(record["error"]?["code"] == "body_too_large")
            #expect(record["error"]?["message"]?.string?.contains("make the row smaller") == true)
            let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            #expect(stats["tables"]?["orders"]?["outbox_parked"]?.int == 1)
            #expect(stats["tables"]?["orders"]?["outbox_in_flight"]?.int == 0)

            // Later writes go on syncing, and the parked row is not sent again.
            #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/z2", body: #"{"values":{"total":2}}"#).status == 200)
            let next = try await system.sync("gw-a")
            #expect(next.status == 200, "\(next.body)")
            #expect(next.json["accepted"]?.int == 1)
            #expect(next.json["rejected"]?.int == 0)
            _ = try await system.awaitChange(on: "gw-b", table: "orders", "z2")

            // Settled with a row the cloud takes, it arrives.
            let settled = try await system.gateway(
                "gw-a", .POST, "/v1/conflicts/orders/big", body: #"{"values":{"customer":"trimmed"}}"#)
            #expect(settled.status == 200, "\(settled.body)")
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 1)
            let arrived = try await system.awaitChange(on: "gw-b", table: "orders", "big")
            #expect(arrived["values"]?["customer"] == "trimmed")
        }
    }
}
