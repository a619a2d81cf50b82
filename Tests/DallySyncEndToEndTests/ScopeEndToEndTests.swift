import DallyCore
import DallySync
import DallyTestSupport
import Foundation
import Testing

/// Two gateways on one cloud, each scoped to its own store of `shop_orders`.
enum ScopeSystem {
    static let columns = ["store_id TEXT", "total REAL"]
    /// The cloud's declaration: `store_id` is a scope column.
    static let cloudTable: SystemConfig.Table = {
        var table = SystemConfig.Table("shop_orders", columns: columns)
        table.scopeColumns = ["store_id"]
        return table
    }()

    /// A gateway's declaration, scoped to `store`; uploads wait an hour unless synced now.
    static func gatewayTable(store: String, writes: String? = nil) -> SystemConfig.Table {
        var table = SystemConfig.Table("shop_orders", columns: columns, upload: #"{ max_delay = "1h" }"#)
        table.scope = #"{ store_id = "\#(store)" }"#
        table.scopeWrites = writes
        return table
    }

    static func make(a: String = "S1", b: String = "S2", bWrites: String? = nil) -> SyncSystem {
        SyncSystem(
            config: SyncSystem.config(tables: [cloudTable]),
            gatewayTables: ["gw-a": [gatewayTable(store: a)], "gw-b": [gatewayTable(store: b, writes: bWrites)]])
    }
}

extension SyncSystem {
    /// Writes rows straight into the cloud, as gateway `gw-b` from a replica of its own that
    /// no running gateway is: `rows` are `(id, base version, store)`.
    func seed(_ batch: String, _ rows: [(String, Int64?, String)]) async throws {
        let request = BatchRequest(
            batchID: batch, gateway: "gw-b", replica: "seeder", since: TableVersions(),
            sections: [
                BatchRequest.Section(
                    table: "shop_orders", columns: ["store_id", "total"],
                    changes: rows.map {
                        BatchRequest.Change(
                            id: $0.0, baseVersion: $0.1, updatedAt: 1_000, deleted: false, values: [.string($0.2), .double(1)])
                    })
            ])
        let reply = try await cloudRequest(.POST, "/v1/batches", as: "gw-b", body: request.encode())
        guard reply.status == 200 else { throw TestFailure("seed \(batch): \(reply.status) \(reply.body)") }
    }

    /// The ids of the live rows gateway `id` holds.
    func liveIDs(_ id: String) async throws -> [String] {
        let reply = try await gateway(id, .GET, "/v1/tables/shop_orders/rows?limit=1000")
        return (reply.json["rows"]?.array ?? []).compactMap { $0["id"]?.string }.sorted()
    }

    /// Gateway `id`'s changes feed after `since`.
    func feed(_ id: String, since: Int64) async throws -> (changes: [JSONValue], next: Int64) {
        let reply = try await gateway(id, .GET, "/v1/tables/shop_orders/changes?since=\(since)&limit=1000")
        return (reply.json["changes"]?.array ?? [], reply.json["next_since"]?.int ?? since)
    }
}

@Suite("End to end: sync scopes", .serialized)
struct ScopeEndToEndTests {
    @Test func eachGatewayHoldsItsStoreAndARowThatMovesLeavesOneAndReachesTheOther() async throws {
        try await SyncSystem.run(ScopeSystem.make()) { system in
            try await system.seed("seed-1", [("r1", nil, "S1"), ("r2", nil, "S1"), ("r3", nil, "S2"), ("r4", nil, "S3")])
            try await system.sync("gw-a", table: "shop_orders")
            try await system.sync("gw-b", table: "shop_orders")
            #expect(try await system.liveIDs("gw-a") == ["r1", "r2"])
            #expect(try await system.liveIDs("gw-b") == ["r3"])
            let before = try await system.feed("gw-a", since: 0)

            // r1 moves from S1 to S2 (cloud version 1 → 5).
            try await system.seed("seed-2", [("r1", 1, "S2")])
            try await system.sync("gw-a", table: "shop_orders")
            try await system.sync("gw-b", table: "shop_orders")
            #expect(try await system.liveIDs("gw-a") == ["r2"])
            #expect(try await system.liveIDs("gw-b") == ["r1", "r3"])
            #expect(try await system.row("gw-b", table: "shop_orders", "r1")?["values"]?["store_id"]?.string == "S2")
            // A's local clients see r1 go, as a change of its own.
            let after = try await system.feed("gw-a", since: before.next)
            let gone = try #require(after.changes.first { $0["id"]?.string == "r1" })
            #expect(gone["deleted"]?.bool == true)
            // Nothing went upstream: the cloud's r1 is still live, in S2.
            let page = try await system.cloudRequest(.GET, "/v1/tables/shop_orders/changes?since=0", as: "gw-b")
            let cloudRow = page.json["rows"]?.array?.first { $0.array?.first?.string == "r1" }
            #expect(cloudRow?.array?[3].bool == false)
        }
    }

    @Test func aScopeChangedOnRestartDropsWhatLeftPullsWhatEnteredAndKeepsDirtyRows() async throws {
        let system = ScopeSystem.make()
        try await SyncSystem.run(system) { system in
            try await system.seed("seed-1", [("r1", nil, "S1"), ("r2", nil, "S1"), ("r3", nil, "S2"), ("r4", nil, "S3")])
            try await system.sync("gw-a", table: "shop_orders")
            #expect(try await system.liveIDs("gw-a") == ["r1", "r2"])
            // A local change to r2, not yet uploaded (the table's uploads wait an hour).
            let put = try await system.gateway(
                "gw-a", .PUT, "/v1/tables/shop_orders/rows/r2", body: #"{"values":{"store_id":"S1","total":7}}"#)
            #expect(put.status == 200)

            try await system.stopGateway("gw-a")
            system.gatewayTables.withLock { $0["gw-a"] = [ScopeSystem.gatewayTable(store: "S3")] }
            try await system.startGateway("gw-a")
            try await system.sync("gw-a", table: "shop_orders")
            // r1 left, r4 entered, r2 stays: its change is still pending (and has now gone up).
            #expect(try await system.liveIDs("gw-a") == ["r2", "r4"])
        }
    }

    @Test func aWriteOutsideARejectingScopeIsRefusedAndChangesNothing() async throws {
        try await SyncSystem.run(ScopeSystem.make(bWrites: "reject")) { system in
            let outside = try await system.gateway(
                "gw-b", .PUT, "/v1/tables/shop_orders/rows/x1", body: #"{"values":{"store_id":"S1","total":1}}"#)
            #expect(outside.status == 403)
            #expect(outside.errorCode == "out_of_scope")
            #expect(try await system.liveIDs("gw-b") == [])
            let inside = try await system.gateway(
                "gw-b", .PUT, "/v1/tables/shop_orders/rows/x2", body: #"{"values":{"store_id":"S2","total":1}}"#)
            #expect(inside.status == 200)
            let moveOut = try await system.gateway(
                "gw-b", .PATCH, "/v1/tables/shop_orders/rows/x2", body: #"{"values":{"store_id":"S9"}}"#)
            #expect(moveOut.status == 403)
            // A gateway that accepts writes outside its scope (A) stores and syncs them.
            let accepted = try await system.gateway(
                "gw-a", .PUT, "/v1/tables/shop_orders/rows/x3", body: #"{"values":{"store_id":"S2","total":1}}"#)
            #expect(accepted.status == 200)
            try await system.sync("gw-a", table: "shop_orders")
            try await system.sync("gw-b", table: "shop_orders")
            #expect(try await system.liveIDs("gw-b") == ["x2", "x3"])
        }
    }

    @Test func theCloudFiltersNotifyByScopeAndRefusesAScopeItCannotIndex() async throws {
        try await SyncSystem.run(ScopeSystem.make()) { system in
            try await system.seed("seed-1", [("r1", nil, "S1")])
            let s1 = "scopes=" + percent(#"{"shop_orders":{"store_id":["S1"]}}"#)
            let s3 = "scopes=" + percent(#"{"shop_orders":{"store_id":"S3"}}"#)
            try await system.seed("seed-2", [("r2", nil, "S2")])
            // Version 2 is r2, in S2: a gateway scoped to S3 past version 0 has nothing to pull…
            let none = try await system.cloudRequest(
                .GET, "/v1/notify?versions=shop_orders:0&wait=0&replica=x&\(s3)", as: "gw-a")
            #expect(none.status == 200)
            #expect(none.json["versions"] == .object([]))
            // …one scoped to S1 has r1.
            let some = try await system.cloudRequest(
                .GET, "/v1/notify?versions=shop_orders:0&wait=0&replica=x&\(s1)", as: "gw-a")
            #expect(some.json["versions"]?["shop_orders"]?.int == 2)

            let page = try await system.cloudRequest(.GET, "/v1/tables/shop_orders/changes?since=0&\(s3)", as: "gw-a")
            #expect(page.json["rows"]?.array?.isEmpty == true)
            #expect(page.json["version"]?.int == 2)

            let bad = try await system.cloudRequest(
                .GET, "/v1/tables/shop_orders/changes?since=0&scopes=" + percent(#"{"shop_orders":{"total":[1]}}"#),
                as: "gw-a")
            #expect(bad.status == 400)
            #expect(bad.errorCode == "bad_query")
            #expect(bad.json["error"]?["field"]?.string == "scopes.shop_orders.total")
        }
    }
}

private func percent(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
}
