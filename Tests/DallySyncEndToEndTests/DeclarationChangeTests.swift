import DallyCore
import DallyGateway
import DallyTestSupport
import Testing

/// A table's declaration changed on a gateway or the cloud while both hold its rows: a column
/// added on the cloud first then on a site (the site's old rows never held the column's values,
/// since pages it pulled before carried values it had no column for), a site ahead of its
/// cloud, a local-only table turned synced.
@Suite("End to end: a table's declaration changed", .serialized)
struct DeclarationChangeTests {
    static let full = ["name TEXT", "note TEXT", "size INTEGER"]

    static func table(_ columns: [String]) -> SystemConfig.Table {
        SystemConfig.Table("items", columns: columns, upload: #"{ max_delay = "1h" }"#)
    }

    static func system() -> SyncSystem {
        SyncSystem(
            config: SyncSystem.config(tables: [table(full)]),
            gatewayTables: ["gw-a": [table(["name TEXT"])], "gw-b": [table(full)]])
    }

    @Test("old rows get the added columns' values from the cloud, and a local write never sends a null over them")
    func addedColumnsAreFilledFromTheCloud() async throws {
        let told = ToldLines()
        try await SyncSystem.run(Self.system()) { system in
            func put(_ gateway: String, _ id: String, _ values: String) async throws {
                let reply = try await system.gateway(gateway, .PUT, "/v1/tables/items/rows/\(id)", body: #"{"values":\#(values)}"#)
                #expect(reply.status == 200 || reply.status == 201, "\(reply.body)")
            }
            func patch(_ gateway: String, _ id: String, _ values: String) async throws {
                let reply = try await system.gateway(gateway, .PATCH, "/v1/tables/items/rows/\(id)", body: #"{"values":\#(values)}"#)
                #expect(reply.status == 200, "\(reply.body)")
            }
            func sync(_ gateway: String) async throws {
                let reply = try await system.sync(gateway, table: "items")
                #expect(reply.status == 200, "\(reply.body)")
            }
            func values(_ gateway: String, _ id: String) async throws -> JSONValue? {
                try await system.row(gateway, table: "items", id)?["values"]
            }
            func filling() async throws -> [String]? {
                let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin)
                return stats.json["tables"]?["items"]?["filling_columns"]?.array?.compactMap(\.string)
            }

            // gw-b knows every column; gw-a only `name`.
            try await put("gw-b", "r1", #"{"name":"one","note":"from b","size":1}"#)
            try await put("gw-b", "r2", #"{"name":"two","note":"kept","size":2}"#)
            try await put("gw-b", "r4", #"{"name":"four"}"#)
            try await sync("gw-b")
            try await put("gw-a", "r3", #"{"name":"three"}"#)
            try await sync("gw-a")
            try await sync("gw-b")
            try await patch("gw-b", "r3", #"{"note":"noted by b","size":3}"#)
            try await sync("gw-b")
            try await sync("gw-a")
            #expect(try await values("gw-a", "r3")?["name"]?.string == "three")

            // The site is upgraded while its link is down: gw-a now declares the cloud's columns.
            try await system.stopGateway("gw-a")
            try await system.stopCloud()
            system.gatewayTables.withLock { $0["gw-a"] = [Self.table(Self.full)] }
            try await system.live.startGateway("gw-a", Gateway(config: try system.gatewayConfig("gw-a"), logger: told.logger()))

            // Written on the site before it has synced since the upgrade: the rows' new
            // columns are not known there yet.
            try await patch("gw-a", "r1", #"{"name":"one, renamed on a"}"#)
            try await patch("gw-a", "r4", #"{"note":"a's own note"}"#)
            #expect(try await filling() == ["note", "size"])
            try await system.startCloud()
            // A CI run once answered this sync-now 202 without the link said to be back.
            let synced = try await system.syncOnceTheLinkIsBack("gw-a", table: "items")
            #expect(synced.status == 200, "\(synced.body)")
            #expect(try await filling() == [])
            // What an operator reads: the wait, and its end.
            #expect(told.lines.contains { $0.hasPrefix("info columns were added") && $0.contains("tables=items") }, "\(told.lines)")
            #expect(told.lines.contains { $0.hasPrefix("info added columns filled from the cloud") }, "\(told.lines)")

            let r1 = try await values("gw-a", "r1")
            #expect(r1?["name"]?.string == "one, renamed on a")
            #expect(r1?["note"]?.string == "from b")
            #expect(r1?["size"]?.int == 1)
            #expect(try await values("gw-a", "r2")?["note"]?.string == "kept")
            // gw-a's own row, whose later note came from gw-b.
            #expect(try await values("gw-a", "r3")?["note"]?.string == "noted by b")
            #expect(try await values("gw-a", "r3")?["size"]?.int == 3)
            #expect(try await values("gw-a", "r4")?["note"]?.string == "a's own note")

            // What gw-a sent kept the cloud's values.
            try await sync("gw-b")
            let b1 = try await values("gw-b", "r1")
            #expect(b1?["name"]?.string == "one, renamed on a")
            #expect(b1?["note"]?.string == "from b")
            #expect(b1?["size"]?.int == 1)
            #expect(try await values("gw-b", "r4")?["note"]?.string == "a's own note")

            // Nothing is left pending on gw-a, and a write after the fill goes up as usual.
            try await patch("gw-a", "r2", #"{"size":20}"#)
            try await sync("gw-a")
            try await sync("gw-b")
            #expect(try await values("gw-b", "r2")?["size"]?.int == 20)
            #expect(try await values("gw-b", "r2")?["note"]?.string == "kept")
        }
    }

    @Test("a gateway ahead of its cloud keeps the table's changes until the cloud declares their column; pulls go on")
    func aGatewayAheadOfItsCloudWaitsForIt() async throws {
        let system = SyncSystem(
            config: SyncSystem.config(tables: [Self.table(["name TEXT"])]),
            gatewayTables: ["gw-a": [Self.table(Self.full)], "gw-b": [Self.table(["name TEXT"])]])
        let told = ToldLines()
        try await SyncSystem.run(system, gateways: ["gw-b"]) { system in
            try await system.live.startGateway("gw-a", Gateway(config: try system.gatewayConfig("gw-a"), logger: told.logger()))
            for id in ["r1", "r2", "r3"] {
                let reply = try await system.gateway(
                    "gw-a", .PUT, "/v1/tables/items/rows/\(id)", body: #"{"values":{"name":"n","note":"note of \#(id)","size":1}}"#)
                #expect(reply.status == 200, "\(reply.body)")
            }
            #expect(try await system.gateway("gw-b", .PUT, "/v1/tables/items/rows/b1", body: #"{"values":{"name":"from b"}}"#).status == 200)
            #expect(try await system.sync("gw-b", table: "items").status == 200)

            let waiting = try await system.sync("gw-a", table: "items")
            #expect(waiting.status == 202, "\(waiting.body)")
            #expect(waiting.body.contains("lacks note, size"), "\(waiting.body)")
            func table() async throws -> JSONValue? {
                try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json["tables"]?["items"]
            }
            let held = try await table()
            #expect(held?["cloud_declaration"]?["differences"] == .array([.string("columns_missing")]), "\(held ?? .null)")
            #expect(held?["cloud_declaration"]?["held"] == .array([.string("uploads")]))
            // Nothing crossed to be refused: no record to read, the three wait in the outbox.
            #expect(held?["outbox_pending"]?.int == 3)
            #expect(try await system.gateway("gw-a", .GET, "/v1/conflicts?table=items").json["conflicts"]?.array?.isEmpty == true)
            #expect(!told.lines.contains { $0.hasPrefix("warning the cloud refused changes") }, "\(told.lines)")
            #expect(told.lines.contains { $0.hasPrefix("warning the cloud's declaration lacks what this gateway declares") })
            // What the cloud has still comes down.
            #expect(try await system.row("gw-a", table: "items", "b1")?["values"]?["name"]?.string == "from b")

            // The cloud is upgraded; a sync-now asks it again, and the changes go.
            try await system.stopCloud()
            try await system.live.startCloud(
                try SyncSystem.config(tables: [Self.table(Self.full)]).cloud(
                    dataDirectory: system.live.directory("cloud"), extra: SyncSystem.cloudLimits))
            let sent = try await system.sync("gw-a", table: "items")
            #expect(sent.status == 200, "\(sent.body)")
            #expect(sent.json["accepted"]?.int == 3)
            #expect(try await table()?["cloud_declaration"] == .null)
            #expect(told.lines.contains { $0.hasPrefix("info the cloud's declaration agrees with this gateway's again") && $0.contains("table=items") })
            let page = try await system.cloudRequest(.GET, "/v1/tables/items/changes?since=0", as: "gw-b").json
            let notes = (page["rows"]?.array ?? []).compactMap { $0.array?[5].string }.sorted()
            #expect(notes == ["note of r1", "note of r2", "note of r3"])
        }
    }

    @Test("changes an older cloud refused for a column it lacks go again, with no settling, once it declares it")
    func refusalsOfAnOlderCloudGoAgainOnceItCatchesUp() async throws {
        let system = SyncSystem(
            config: SyncSystem.config(tables: [Self.table(["name TEXT"])]),
            gatewayTables: ["gw-a": [Self.table(Self.full)], "gw-b": [Self.table(["name TEXT"])]])
        let told = ToldLines()
        try await SyncSystem.run(system, gateways: ["gw-b"]) { system in
            // A cloud from before `GET /v1/tables`: the gateway cannot compare, sends, and is refused.
            try await system.startGatewayOnAnOlderCloud("gw-a", logger: told.logger())
            for id in ["r1", "r2", "r3"] {
                let reply = try await system.gateway(
                    "gw-a", .PUT, "/v1/tables/items/rows/\(id)", body: #"{"values":{"name":"n","note":"note of \#(id)","size":1}}"#)
                #expect(reply.status == 200, "\(reply.body)")
            }
            #expect(try await system.sync("gw-a", table: "items").status == 200)
            func open() async throws -> [JSONValue] {
                try await system.gateway("gw-a", .GET, "/v1/conflicts?table=items").json["conflicts"]?.array ?? []
            }
            let refused = try await open()
            #expect(refused.count == 3)
            #expect(refused.allSatisfy { $0["error"]?["code"]?.string == "unknown_column" })
            // A line per answer that refused some: the writes may have gone in one batch or more,
            // and the first wake's probe may have sent one again.
            let warned = told.lines.filter { $0.hasPrefix("warning the cloud refused changes") }
            #expect(!warned.isEmpty && warned.allSatisfy { $0.contains("code=unknown_column field=note") }, "\(warned)")
            let counted = warned.compactMap { line in
                line.split(separator: " ").first { $0.hasPrefix("changes=") }.flatMap { Int($0.dropFirst(8)) }
            }
            #expect(counted.reduce(0, +) >= 3, "\(warned)")
            #expect(told.lines.contains { $0.hasPrefix("info the cloud does not list its tables") })

            // A sync-now before the cloud has the column: refused again, still recorded.
            #expect(try await system.sync("gw-a", table: "items").status == 200)
            #expect(try await open().count == 3)

            // The cloud is upgraded; a sync-now sends one as a probe, and the rest follow it.
            try await system.stopCloud()
            try await system.live.startCloud(
                try SyncSystem.config(tables: [Self.table(Self.full)]).cloud(
                    dataDirectory: system.live.directory("cloud"), extra: SyncSystem.cloudLimits))
            #expect(try await system.sync("gw-a", table: "items").status == 200)
            #expect(try await open().isEmpty)
            let page = try await system.cloudRequest(.GET, "/v1/tables/items/changes?since=0", as: "gw-b").json
            let notes = (page["rows"]?.array ?? []).compactMap { $0.array?[5].string }.sorted()
            #expect(notes == ["note of r1", "note of r2", "note of r3"])
        }
    }

    @Test("requests moved to a cloud node a rolling change has not reached: the node is asked, and what it lacks waits")
    func aNodeOnAnOlderDeclarationIsAskedAfterAMove() async throws {
        let system = SyncSystem(
            config: SyncSystem.config(tables: [Self.table(Self.full)]), gatewayTables: ["gw-a": [Self.table(Self.full)]])
        try await SyncSystem.run(system, gateways: []) { system in
            let nodes = try await system.startGatewayOnNodes("gw-a", count: 2)
            // The second node still runs the configuration from before `size` was added.
            nodes[1].answerDeclarations(
                #"{"tables":[{"name":"items","columns":[{"name":"name","type":"TEXT"},{"name":"note","type":"TEXT"}],"scope_columns":[]}]}"#)
            func put(_ id: String) async throws {
                let reply = try await system.gateway(
                    "gw-a", .PUT, "/v1/tables/items/rows/\(id)", body: #"{"values":{"name":"n","size":3}}"#)
                #expect(reply.status == 200, "\(reply.body)")
            }
            func stats() async throws -> JSONValue {
                try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            }
            // What each node saw, for a failure's message: this test failed once in many CI runs
            // (r2 had left before the hold) and never since; the next failure should say how.
            func trail() async -> String {
                let sync = (try? await stats())?["sync"]
                let seen = nodes.enumerated().map { index, node in
                    let lines = node.exchanges.map { exchange in
                        "\(exchange.method) \(exchange.path) forwarded=\(exchange.forwarded)"
                            + (exchange.batchID.map { " batch=\($0) up=\(exchange.uploads.sorted())" } ?? "")
                    }
                    return "node \(index):\n  " + lines.joined(separator: "\n  ")
                }
                let counts = ["cycles", "failures", "batches_sent", "batches_resent", "rows_accepted", "last_error"].map { name in
                    "\(name)=\(sync?[name].map { "\($0)" } ?? "-")"
                }
                return "sync: " + counts.joined(separator: " ") + "\n" + seen.joined(separator: "\n")
            }
            try await put("r1")
            #expect(try await system.sync("gw-a", table: "items").json["accepted"]?.int == 1)

            // The first node cannot serve: requests move to the second.
            nodes[0].makeUnavailable(true)
            _ = try await system.sync("gw-a", table: "items")
            #expect(try await stats()["uplinks"]?.array?.first?["node"]?.string == nodes[1].url)
            try await put("r2")
            let held = try await system.sync("gw-a", table: "items")
            #expect(held.status == 202 && held.body.contains("size"), "\(held.body)")
            let table = try await stats()["tables"]?["items"]
            #expect(table?["cloud_declaration"]?["differences"]?.array?.compactMap(\.string) == ["columns_missing"])
            let pending = table?["outbox_pending"]?.int
            if pending != 1 { Issue.record("outbox_pending \(pending.map(String.init) ?? "nil"), not 1\n\(await trail())") }
            #expect(nodes[1].exchanges.filter { $0.path == "/v1/tables" }.count >= 1)

            // The rolling change reaches the node: the next sync-now asks it again and sends.
            nodes[1].answerDeclarations(nil)
            let accepted = try await system.sync("gw-a", table: "items").json["accepted"]?.int
            if accepted != 1 { Issue.record("accepted \(accepted.map(String.init) ?? "nil"), not 1\n\(await trail())") }
            let page = try await system.cloudRequest(.GET, "/v1/tables/items/changes?since=0", as: "gw-b").json
            #expect(page["rows"]?.array?.count == 2)
        }
    }

    @Test("rows a local-only table held reach the cloud once the table syncs")
    func aLocalOnlyTableTurnedSyncedSendsItsRows() async throws {
        let local = SystemConfig.Table("items", columns: ["name TEXT"], localOnly: true)
        let system = SyncSystem(
            config: SyncSystem.config(tables: [Self.table(["name TEXT"])]),
            gatewayTables: ["gw-a": [local], "gw-b": [Self.table(["name TEXT"])]])
        try await SyncSystem.run(system) { system in
            for id in ["k1", "k2"] {
                let reply = try await system.gateway("gw-a", .PUT, "/v1/tables/items/rows/\(id)", body: #"{"values":{"name":"kept"}}"#)
                #expect(reply.status == 200, "\(reply.body)")
            }
            try await system.stopGateway("gw-a")
            system.gatewayTables.withLock { $0["gw-a"] = [Self.table(["name TEXT"])] }
            try await system.startGateway("gw-a")
            #expect(try await system.sync("gw-a", table: "items").json["accepted"]?.int == 2)
            #expect(try await system.sync("gw-b", table: "items").status == 200)
            #expect(try await system.row("gw-b", table: "items", "k1")?["values"]?["name"]?.string == "kept")
            #expect(try await system.row("gw-b", table: "items", "k2") != nil)
        }
    }

    @Test("a batch in flight when the gateway's id changed goes under the new id")
    func aRenamedGatewaySendsItsBatchInFlight() async throws {
        var config = SyncSystem.config(tables: [Self.table(["name TEXT"])])
        config.gateways.append(SystemConfig.Credential(id: "gw-c", secret: "secret-of-gateway-c-0123"))
        let system = SyncSystem(config: config)
        try await SyncSystem.run(system) { system in
            // Recorded in flight, never answered: the cloud is down (after a first wake, which
            // read the cloud's declarations).
            #expect(try await system.sync("gw-a", table: "items").status == 200)
            try await system.stopCloud()
            #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/items/rows/r1", body: #"{"values":{"name":"one"}}"#).status == 200)
            _ = try await system.sync("gw-a", table: "items")
            let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            try #require(stats["tables"]?["items"]?["outbox_in_flight"]?.int == 1)

            // The site is given another id (its old credentials revoked, say).
            try await system.stopGateway("gw-a")
            var renamed = try system.config.gateway(
                "gw-c", dataDirectory: system.live.directory("gw-a"),
                link: .init(url: system.live.cloudURL, notifyWait: "10s", retryMin: "50ms", retryMax: "500ms"),
                tables: [Self.table(["name TEXT"])])
            for i in renamed.uplinks.indices { renamed.uplinks[i].downProbeInterval = nil }
            try await system.live.startGateway("gw-a", renamed)
            try await system.startCloud()
            // The batch goes with this sync-now, or with the wake that retried as the cloud came
            // back (then this one finds nothing to send): either way it has left the box when the
            // sync-now answers, under the new id (the cloud refuses a batch naming another
            // gateway than its credentials). Two CI runs answered it 202 with the cloud up (the
            // reason unrecorded); the likely cause, a connection attempt begun while the cloud
            // was down failing the wake's request waiting in the pool, is tried again now
            // (``RefusedConnection``).
            let synced = try await system.syncOnceTheLinkIsBack("gw-a", table: "items")
            #expect(synced.status == 200, "\(synced.body)")
            let after = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            #expect(after["tables"]?["items"]?["outbox_in_flight"]?.int == 0)
            #expect(after["tables"]?["items"]?["outbox_pending"]?.int == 0)
            #expect(try await system.sync("gw-b", table: "items").status == 200)
            #expect(try await system.row("gw-b", table: "items", "r1")?["values"]?["name"]?.string == "one")
        }
    }
}
