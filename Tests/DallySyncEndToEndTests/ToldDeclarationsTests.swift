import DallyCore
import DallyTestSupport
import Testing

/// The schema exchange the other way: each gateway tells its cloud what it declares
/// (`POST /v1/tables`, at its first wake), and the cloud's `/stats` and `/metrics` show which
/// sites are behind it (a column the cloud added that a site does not declare yet) or ahead of
/// it, kept in its store across restarts.
@Suite("End to end: the cloud shows what each gateway declares", .serialized)
struct ToldDeclarationsTests {
    static func items(_ columns: [String]) -> SystemConfig.Table {
        SystemConfig.Table("items", columns: columns, upload: #"{ max_delay = "1h" }"#)
    }

    static let notes = SystemConfig.Table("notes", columns: ["text TEXT"], upload: #"{ max_delay = "1h" }"#)

    @Test("sites behind, ahead of and typed otherwise than the cloud are named by table and column, a site never seen too, across a restart")
    func theCloudShowsEachSitesDifferences() async throws {
        var config = SyncSystem.config(tables: [Self.items(["name TEXT", "size TEXT", "note TEXT"]), Self.notes])
        // A site configured in the cloud that never connects.
        config.gateways.append(SystemConfig.Credential(id: "gw-c", secret: "secret-of-gateway-c-0123"))
        let system = SyncSystem(
            config: config,
            gatewayTables: [
                // Behind (no `note` yet) and `size` typed otherwise.
                "gw-a": [Self.items(["name TEXT", "size INTEGER"]), Self.notes],
                // Ahead: `extra` is not declared in the cloud yet.
                "gw-b": [Self.items(["name TEXT", "size TEXT", "note TEXT", "extra TEXT"]), Self.notes],
            ])
        let admin = [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]
        try await SyncSystem.run(system) { system in
            for gateway in ["gw-a", "gw-b"] { _ = try await system.sync(gateway, table: "notes") }
            func differences(_ gateway: String) async throws -> JSONValue? {
                let stats = try await system.cloudRequest(.GET, "/stats", as: nil, headers: admin).json
                return stats["gateways"]?[gateway]?["declaration"]?["differences"]
            }
            // Members sorted, as the cloud writes them.
            let expectedA = try JSONParser.parse(Array(#"{"items":{"columns_not_declared":["note"],"types_differ":["size"]}}"#.utf8))
            let expectedB = try JSONParser.parse(Array(#"{"items":{"columns_missing":["extra"]}}"#.utf8))
            let none = try JSONParser.parse(Array("{}".utf8))
            #expect(try await differences("gw-a") == expectedA)
            #expect(try await differences("gw-b") == expectedB)
            let stats = try await system.cloudRequest(.GET, "/stats", as: nil, headers: admin).json
            #expect(stats["gateways"]?["gw-b"]?["declaration"]?["version"]?.string == DallyVersion.current, "\(stats)")
            // And the gateway shows the cloud's.
            let gatewayStats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            #expect(gatewayStats["sync"]?["cloud_version"]?.string == DallyVersion.current, "\(gatewayStats)")
            // The site never seen is listed as such: no pull, no telling.
            #expect(stats["gateways"]?["gw-c"] == (try JSONParser.parse(Array(#"{"cursor_lag":{},"last_seen_seconds_ago":null}"#.utf8))), "\(stats)")
            let metrics = try await system.cloudRequest(.GET, "/metrics", as: nil, headers: admin).body
            #expect(metrics.contains(#"dally_cloud_gateway_declaration_differences{gateway="gw-a"} 1"#), "\(metrics)")
            #expect(metrics.contains("dally_cloud_gateways_never_seen 1"), "\(metrics)")

            // Bad tellings are refused with the reason, and change nothing.
            let notJSON = try await system.cloudRequest(.POST, "/v1/tables", body: Array("tables".utf8))
            #expect(notJSON.status == 400 && notJSON.json["error"]?["code"]?.string == "malformed_json", "\(notJSON.body)")
            let shapeless = try await system.cloudRequest(.POST, "/v1/tables", body: Array(#"{"tables":[{"name":"items"}]}"#.utf8))
            #expect(shapeless.status == 400 && shapeless.json["error"]?["code"]?.string == "bad_request", "\(shapeless.body)")
            #expect(shapeless.body.contains("tables[0] lacks 'columns'"), "\(shapeless.body)")
            #expect(try await system.cloudRequest(.POST, "/v1/tables", as: nil, body: Array("{}".utf8)).status == 401)
            #expect(try await differences("gw-a") == expectedA)

            // A telling answers as GET does, and replaces what the gateway told before.
            let agreeing = #"{"tables":[{"name":"items","columns":[{"name":"name","type":"TEXT"},{"name":"size","type":"TEXT"},{"name":"note","type":"TEXT"}],"scope_columns":[]}]}"#
            let answer = try await system.cloudRequest(.POST, "/v1/tables", body: Array(agreeing.utf8))
            #expect(answer.status == 200 && answer.json["tables"]?.array?.count == 2, "\(answer.body)")
            #expect(try await differences("gw-a") == none)

            // Kept in the cloud's store: a restarted cloud shows them before any gateway tells again.
            try await system.stopCloud()
            try await system.startCloud()
            #expect(try await differences("gw-a") == none)
            #expect(try await differences("gw-b") == expectedB)
        }
    }
}
