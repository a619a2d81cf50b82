import DallyCore
import Testing

/// Rows a TinySync client writes to one gateway reach the cloud, and a TinySync client of
/// another gateway receives them.
@Suite struct TinySyncCloudTests {
    @Test func rowsWrittenThroughTinySyncTravelThroughTheCloud() async throws {
        try await SyncSystem.run { system in
            let written = try await system.gateway(
                "gw-a", .POST, "/v1/tinysync",
                body: """
                    {"last_synced": null, "entities": [{"name": "orders", "scope": {"customer": "Ada"},
                      "created": [{"id": "521fa720594cc48c1d000003", "customer": "Ada", "total": 12.5,
                                   "updated_at": "2014-02-17T17:23:54-0700"}]}]}
                    """)
            #expect(written.status == 200, "\(written.body)")
            #expect(written.json["entities"]?.array?.first?["saved"] == ["521fa720594cc48c1d000003"])
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 1)

            let arrived = try await system.awaitChange(on: "gw-b", table: "orders", "521fa720594cc48c1d000003")
            #expect(arrived["updated_at"]?.int == 1_392_683_034_000)
            let read = try await system.gateway(
                "gw-b", .POST, "/v1/tinysync",
                body: #"{"last_synced": null, "entities": [{"name": "orders", "scope": {"customer": "Ada"}}]}"#)
            let rows = read.json["entities"]?.array?.first?["created"]?.array ?? []
            #expect(rows.map { $0["id"] } == ["521fa720594cc48c1d000003"])
            #expect(rows.first?["total"] == 12.5)
            #expect(rows.first?["updated_at"] == "2014-02-18T00:23:54.000Z")
        }
    }
}
