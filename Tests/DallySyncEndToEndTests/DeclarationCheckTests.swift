import DallyCore
import DallyGateway
import DallyTestSupport
import Testing

/// A gateway whose table declares a column with another type than its cloud's: the gateway
/// reads the cloud's declarations (`GET /v1/tables`) and holds the table both ways, so that
/// no value goes to a column that refuses it and none comes down that the gateway cannot hold.
@Suite("End to end: declarations compared with the cloud's", .serialized)
struct DeclarationCheckTests {
    static func items(_ size: String) -> SystemConfig.Table {
        SystemConfig.Table("items", columns: ["name TEXT", "size \(size)"], upload: #"{ max_delay = "1h" }"#)
    }

    static let notes = SystemConfig.Table("notes", columns: ["text TEXT"], upload: #"{ max_delay = "1h" }"#)

    @Test("a table typed otherwise than in the cloud is held both ways; the gateway's other tables sync")
    func aTableTypedOtherwiseIsHeld() async throws {
        let told = ToldLines()
        let system = SyncSystem(
            config: SyncSystem.config(tables: [Self.items("TEXT"), Self.notes]),
            gatewayTables: ["gw-a": [Self.items("INTEGER"), Self.notes]])
        try await SyncSystem.run(system, gateways: ["gw-b"]) { system in
            try await system.live.startGateway("gw-a", Gateway(config: try system.gatewayConfig("gw-a"), logger: told.logger()))
            // The cloud's document, as a gateway reads it.
            let listed = try await system.cloudRequest(.GET, "/v1/tables", as: "gw-a")
            #expect(listed.status == 200)
            let items = listed.json["tables"]?.array?.first { $0["name"]?.string == "items" }
            #expect(items?["columns"]?.array?.last?["type"]?.string == "TEXT", "\(listed.body)")
            #expect(try await system.cloudRequest(.GET, "/v1/tables", as: nil).status == 401)

            func put(_ gateway: String, _ table: String, _ id: String, _ values: String) async throws {
                let reply = try await system.gateway(gateway, .PUT, "/v1/tables/\(table)/rows/\(id)", body: #"{"values":\#(values)}"#)
                #expect(reply.status == 200, "\(reply.body)")
            }
            try await put("gw-b", "items", "r1", #"{"name":"one","size":"large"}"#)
            #expect(try await system.sync("gw-b", table: "items").status == 200)

            try await put("gw-a", "items", "r2", #"{"name":"two","size":2}"#)
            try await put("gw-a", "notes", "n1", #"{"text":"goes"}"#)
            let held = try await system.sync("gw-a", table: "items")
            #expect(held.status == 202, "\(held.body)")
            #expect(held.body.contains("size is INTEGER here and TEXT in the cloud"), "\(held.body)")

            let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            let table = stats["tables"]?["items"]
            #expect(table?["cloud_declaration"]?["differences"] == .array([.string("types_differ")]), "\(stats)")
            #expect(table?["cloud_declaration"]?["held"] == .array([.string("uploads"), .string("pulls")]))
            // Nothing went up to be refused, nothing came down that this table cannot hold.
            #expect(table?["outbox_pending"]?.int == 1)
            #expect(table?["outbox_parked"]?.int == 0)
            #expect(table?["values_not_held"]?.int == 0)
            #expect(try await system.row("gw-a", table: "items", "r1") == nil)
            let metrics = try await system.gateway("gw-a", .GET, "/metrics", token: SyncSystem.gatewayAdmin).body
            for direction in ["uploads", "pulls"] {
                #expect(metrics.contains(#"dally_table_declaration_held{table="items",direction="\#(direction)"} 1"#), "\(metrics)")
                #expect(metrics.contains(#"dally_table_declaration_held{table="notes",direction="\#(direction)"} 0"#))
            }
            #expect(
                told.lines.contains {
                    $0.hasPrefix("error the cloud declares this table's columns with other types") && $0.contains("table=items")
                }, "\(told.lines)")
            let page = try await system.cloudRequest(.GET, "/v1/tables/items/changes?since=0", as: "gw-b").json
            #expect(page["rows"]?.array?.count == 1, "only gw-b's row: \(page)")

            // The table that agrees syncs as ever (its row went with the wake of the sync-now).
            #expect(try await system.sync("gw-a", table: "notes").status == 200)
            #expect(try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin)
                .json["tables"]?["notes"]?["outbox_pending"]?.int == 0)
            #expect(try await system.sync("gw-b", table: "notes").status == 200)
            #expect(try await system.row("gw-b", table: "notes", "n1")?["values"]?["text"]?.string == "goes")
            // A gateway that agrees with its cloud holds nothing and says so.
            let other = try await system.gateway("gw-b", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            #expect(other["tables"]?["items"]?["cloud_declaration"] == .null)

            // A column's type cannot change under data (either side refuses to open); the
            // cloud's table is declared again in a new store, and a sync-now asks again.
            try await system.stopCloud()
            try await system.live.startCloud(
                try SyncSystem.config(tables: [Self.items("INTEGER"), Self.notes]).cloud(
                    dataDirectory: system.live.directory("cloud-again"), extra: SyncSystem.cloudLimits))
            let released = try await system.sync("gw-a", table: "items")
            #expect(released.status == 200, "\(released.body)")
            #expect(released.json["accepted"]?.int == 1, "\(released.body)")
            let after = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            #expect(after["tables"]?["items"]?["cloud_declaration"] == .null, "\(after)")
            #expect(told.lines.contains { $0.hasPrefix("info the cloud's declaration agrees with this gateway's again") })
            let sizes = try await system.cloudRequest(.GET, "/v1/tables/items/changes?since=0", as: "gw-b").json
            #expect(sizes["rows"]?.array?.compactMap { $0.array?.last?.int } == [2], "\(sizes)")
        }
    }

    @Test("a cloud that lists its tables but is told none is asked with GET, and the table is held as ever")
    func aCloudThatTakesNoDeclarationsIsAskedWithGet() async throws {
        let system = SyncSystem(
            config: SyncSystem.config(tables: [Self.items("TEXT"), Self.notes]),
            gatewayTables: ["gw-a": [Self.items("INTEGER"), Self.notes]])
        try await SyncSystem.run(system, gateways: []) { system in
            let node = try await system.startGatewayOnNodes("gw-a", count: 1)[0]
            node.refuseTelling(true)
            #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/items/rows/r1", body: #"{"values":{"name":"one","size":1}}"#).status == 200)
            let held = try await system.sync("gw-a", table: "items")
            #expect(held.status == 202 && held.body.contains("size is INTEGER here and TEXT in the cloud"), "\(held.body)")
            // Each ask a POST refused, then a GET (a sync-now of a table that differs asks again,
            // and the first wake may have asked before it).
            let methods = node.exchanges.filter { $0.path == "/v1/tables" }.map(\.method)
            #expect(!methods.isEmpty && methods.count % 2 == 0, "\(methods)")
            #expect(stride(from: 0, to: methods.count - 1, by: 2).allSatisfy { methods[$0] == "POST" && methods[$0 + 1] == "GET" }, "\(methods)")
        }
    }

    @Test("a table scoped on a column the cloud serves no scoped pages for is not pulled; its changes and other tables go")
    func aScopeTheCloudDoesNotServeHoldsOnlyThePulls() async throws {
        let cloudItems = SystemConfig.Table("items", columns: ["name TEXT", "store TEXT"], upload: #"{ max_delay = "1h" }"#)
        var scoped = cloudItems
        scoped.scope = #"{ store = "S1" }"#
        let system = SyncSystem(
            config: SyncSystem.config(tables: [cloudItems, Self.notes]), gatewayTables: ["gw-a": [scoped, Self.notes]])
        let told = ToldLines()
        try await SyncSystem.run(system, gateways: ["gw-b"]) { system in
            try await system.live.startGateway("gw-a", Gateway(config: try system.gatewayConfig("gw-a"), logger: told.logger()))
            func put(_ gateway: String, _ table: String, _ id: String, _ values: String) async throws {
                let reply = try await system.gateway(gateway, .PUT, "/v1/tables/\(table)/rows/\(id)", body: #"{"values":\#(values)}"#)
                #expect(reply.status == 200, "\(reply.body)")
            }
            try await put("gw-b", "items", "b1", #"{"name":"theirs","store":"S1"}"#)
            #expect(try await system.sync("gw-b", table: "items").status == 200)
            try await put("gw-a", "items", "a1", #"{"name":"ours","store":"S1"}"#)
            try await put("gw-a", "notes", "n1", #"{"text":"goes"}"#)

            let answer = try await system.sync("gw-a", table: "items")
            #expect(answer.status == 202, "\(answer.body)")
            #expect(answer.body.contains("scope_columns"), "\(answer.body)")
            let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            let declaration = stats["tables"]?["items"]?["cloud_declaration"]
            #expect(declaration?["differences"] == .array([.string("scope_not_served")]), "\(stats)")
            #expect(declaration?["held"] == .array([.string("pulls")]))
            // The table's own changes went, and so did the other table's: one table's scope no
            // longer stops the gateway's whole sync.
            #expect(stats["tables"]?["items"]?["outbox_pending"]?.int == 0)
            #expect(stats["tables"]?["notes"]?["outbox_pending"]?.int == 0)
            #expect(try await system.row("gw-a", table: "items", "b1") == nil)
            #expect(stats["sync"]?["consecutive_failures"]?.int == 0, "\(stats["sync"] ?? .null)")
            #expect(told.lines.contains { $0.hasPrefix("error the cloud serves no scoped pages") && $0.contains("table=items") }, "\(told.lines)")

            // The cloud lists the column; a sync-now asks again, and the scoped pull comes.
            try await system.stopCloud()
            var served = cloudItems
            served.scopeColumns = ["store"]
            try await system.live.startCloud(
                try SyncSystem.config(tables: [served, Self.notes]).cloud(
                    dataDirectory: system.live.directory("cloud"), extra: SyncSystem.cloudLimits))
            let pulled = try await system.sync("gw-a", table: "items")
            #expect(pulled.status == 200, "\(pulled.body)")
            #expect(try await system.row("gw-a", table: "items", "b1")?["values"]?["name"]?.string == "theirs")
        }
    }


    @Test("a cloud re-declared under a running gateway is read again when a value comes down the gateway cannot hold")
    func aValueTheGatewayCannotHoldMakesItAskAgain() async throws {
        let system = SyncSystem(
            config: SyncSystem.config(tables: [Self.items("INTEGER")]), gatewayTables: ["gw-b": [Self.items("TEXT")]])
        try await SyncSystem.run(system, gateways: ["gw-a"]) { system in
            // First contact: the declarations agree.
            #expect(try await system.sync("gw-a", table: "items").status == 200)
            func table() async throws -> JSONValue? {
                try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json["tables"]?["items"]
            }
            #expect(try await table()?["cloud_declaration"] == .null)

            // The cloud's table is declared again on a new store, `size` as TEXT, and a site
            // that agrees with it writes there.
            try await system.stopCloud()
            try await system.live.startCloud(
                try SyncSystem.config(tables: [Self.items("TEXT")]).cloud(
                    dataDirectory: system.live.directory("cloud-again"), extra: SyncSystem.cloudLimits))
            try await system.startGateway("gw-b")
            let put = try await system.gateway("gw-b", .PUT, "/v1/tables/items/rows/r1", body: #"{"values":{"name":"one","size":"large"}}"#)
            #expect(put.status == 200)
            #expect(try await system.sync("gw-b", table: "items").json["accepted"]?.int == 1)

            // gw-a takes the row (pulled, or carried by a notification): `size` cannot be held
            // here, which makes the next wake ask the cloud again, and hold the table.
            var answers: [Int] = []
            for _ in 0..<3 where try await table()?["cloud_declaration"] == .null {
                answers.append(try await system.sync("gw-a", table: "items").status)
            }
            #expect(try await table()?["values_not_held"]?.int == 1)
            #expect(try await table()?["cloud_declaration"]?["differences"] == .array([.string("types_differ")]), "\(answers)")
            #expect(answers.last == 202, "\(answers)")
            // A local write to the row waits: it would send the value kept here over the cloud's.
            let patch = try await system.gateway("gw-a", .PATCH, "/v1/tables/items/rows/r1", body: #"{"values":{"name":"renamed"}}"#)
            #expect(patch.status == 200)
            #expect(try await system.sync("gw-a", table: "items").status == 202)
            #expect(try await table()?["outbox_pending"]?.int == 1)
            let page = try await system.cloudRequest(.GET, "/v1/tables/items/changes?since=0", as: "gw-b").json
            #expect(page["rows"]?.array?.first?.array?.last?.string == "large", "\(page)")
        }
    }

}
