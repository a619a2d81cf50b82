import DallyCore
import DallyTestSupport
import Testing

/// Two real gateways on one real cloud: changes travel A → cloud → B and back.
@Suite struct PropagationTests {
    @Test func createUpdateAndDeleteTravelBothWays() async throws {
        try await SyncSystem.run { system in
            let put = try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"Ada","total":12.5}}"#)
            #expect(put.status == 200)
            let synced = try await system.sync("gw-a")
            #expect(synced.status == 200)
            #expect(synced.json["accepted"]?.int == 1)

            let created = try await system.awaitChange(on: "gw-b", table: "orders", "o1")
            #expect(created["values"]?["customer"]?.string == "Ada")
            #expect(created["version"]?.int == 1)

            let patch = try await system.gateway("gw-b", .PATCH, "/v1/tables/orders/rows/o1", body: #"{"values":{"paid":true}}"#)
            #expect(patch.status == 200)
            #expect(try await system.sync("gw-b").json["accepted"]?.int == 1)
            let updated = try await system.awaitChange(on: "gw-a", table: "orders", "o1") { $0["version"]?.int == 2 }
            #expect(updated["values"]?["paid"]?.bool == true)
            #expect(updated["values"]?["customer"]?.string == "Ada")

            #expect(try await system.gateway("gw-a", .DELETE, "/v1/tables/orders/rows/o1").status == 200)
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 1)
            let deleted = try await system.awaitChange(on: "gw-b", table: "orders", "o1") { $0["deleted"]?.bool == true }
            #expect(deleted["version"]?.int == 3)

            // Each gateway's own changes are clean (versioned, out of the outbox) and were not
            // echoed back as new local changes.
            let local = try #require(try await system.row("gw-a", table: "orders", "o1"))
            #expect(local["version"]?.int == 3)
            let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            #expect(stats["tables"]?["orders"]?["outbox_pending"]?.int == 0)
        }
    }

    /// A JSON column's numbers travel gateway → cloud → gateway as they were written, an
    /// integer beyond 64 bits and a decimal with more digits than a Double keeps included.
    @Test func aJSONColumnsNumbersTravelDigitForDigit() async throws {
        try await SyncSystem.run { system in
            let items = #"[{"sku":18446744073709551615,"price":0.12345678901234567891},-98765432109876543210,1.5]"#
            let put = try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"items":\#(items)}}"#)
            #expect(put.status == 200)
            let local = try await system.gateway("gw-a", .GET, "/v1/tables/orders/rows/o1")
            #expect(local.body.contains(#""items":\#(items)"#), "\(local.body)")
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 1)

            let arrived = try await system.awaitChange(on: "gw-b", table: "orders", "o1")
            #expect(arrived["values"]?["items"] == (try JSONParser.parse(items)))
            let read = try await system.gateway("gw-b", .GET, "/v1/tables/orders/rows/o1")
            #expect(read.body.contains(#""items":\#(items)"#), "\(read.body)")
        }
    }

    /// A JSON value as deep as a write may nest travels; one level deeper is refused at the
    /// write, where before it was stored and then failed every sync (no batch could carry it).
    @Test func theDeepestJSONValueAWriteTakesTravels() async throws {
        try await SyncSystem.run { system in
            let levels = Value.maxJSONNesting
            let deepest = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
            let put = try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/deep", body: #"{"values":{"items":\#(deepest)}}"#)
            #expect(put.status == 200, "\(put.body)")
            let deeper = "[" + deepest + "]"
            let refused = try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/deeper", body: #"{"values":{"items":\#(deeper)}}"#)
            #expect(refused.status == 422)
            #expect(refused.json["error"]?["code"] == "wrong_type")
            #expect(refused.json["error"]?["field"] == "items")
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 1)
            let arrived = try await system.awaitChange(on: "gw-b", table: "orders", "deep")
            #expect(arrived["values"]?["items"]?.nesting == levels)
        }
    }

    /// A gateway whose table declares a column's type other than the cloud's cannot hold the
    /// values it is sent there: against a cloud too old to list its declarations (which a
    /// newer one's gateway compares, holding the table: ``DeclarationCheckTests``), the rest of
    /// the row arrives, and the mismatch is counted (and logged once) instead of passing unseen.
    @Test func aValueAGatewaysColumnCannotHoldIsCounted() async throws {
        var tables = SyncSystem.tables
        tables[0] = .init("orders", columns: ["customer TEXT", "total INTEGER", "paid BOOLEAN", "items JSON"], conflict: "last_writer_wins")
        try await SyncSystem.run(SyncSystem(gatewayTables: ["gw-b": tables]), gateways: ["gw-a"]) { system in
            try await system.startGatewayOnAnOlderCloud("gw-b")
            let put = try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"Ada","total":12.5}}"#)
            #expect(put.status == 200)
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 1)
            let arrived = try await system.awaitChange(on: "gw-b", table: "orders", "o1")
            #expect(arrived["values"]?["customer"] == "Ada")
            #expect(arrived["values"]?["total"] == .null)
            let stats = try await system.gateway("gw-b", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            #expect(stats["tables"]?["orders"]?["values_not_held"]?.int == 1)
            let metrics = try await system.gateway("gw-b", .GET, "/metrics", token: SyncSystem.gatewayAdmin).body
            #expect(metrics.contains(#"dally_table_values_not_held_total{table="orders"} 1"#))
        }
    }

    @Test func manyRowsWrittenAtOneMomentCrossPageBoundariesIntact() async throws {
        try await SyncSystem.run { system in
            // 120 rows with the same updated_at: the cloud pages by version (50 per page here),
            // so identical timestamps cannot hide or repeat a row at a page boundary.
            let rows = (0..<120).map { #"{"id":"r\#($0)","updated_at":1700000000000,"values":{"customer":"c\#($0)"}}"# }
            let batch = try await system.gateway(
                "gw-a", .POST, "/v1/tables/orders/batch", body: #"{"created":[\#(rows.joined(separator: ","))]}"#)
            #expect(batch.json["saved"]?.array?.count == 120)
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 120)
            #expect(try await system.sync("gw-b").status == 200)

            let page = try await system.gateway("gw-b", .GET, "/v1/tables/orders/rows?limit=1000")
            let ids = Set(page.json["rows"]?.array?.compactMap { $0["id"]?.string } ?? [])
            #expect(ids == Set((0..<120).map { "r\($0)" }))
            let versions = page.json["rows"]?.array?.compactMap { $0["version"]?.int } ?? []
            #expect(Set(versions) == Set(1...120))
        }
    }

    /// A gateway whose requests failed many times while the cloud was down reaches it with
    /// the first request after it is back: no connection backoff of the HTTP client's own
    /// (which grows past a request's whole timeout, 1 s here, after a dozen failures) holds it.
    @Test func aCloudBackAfterManyFailedConnectionsIsReachedAtOnce() async throws {
        try await SyncSystem.run(gateways: ["gw-a"], adjust: { _, config in config.cloud?.requestTimeout = .seconds(1) }) {
            system in
            try await system.stopCloud()
            #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"Ada"}}"#).status == 200)
            let failures = { @Sendable () async throws -> Int64 in
                try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin)
                    .json["uplinks"]?.array?.first?["failures"]?.int ?? 0
            }
            for _ in 0..<15 {
                #expect(try await system.sync("gw-a").status == 202)
            }
            #expect(try await eventually(within: .seconds(120)) { try await failures() >= 15 })
            try await system.startCloud()
            var synced = try await system.sync("gw-a")
            if synced.status == 202 {
                // The retry cycle that was under way as the cloud came back may have opened its
                // connection a moment before the cloud listened, and the sync-now is answered
                // with that failure (seen once in CI: "Connection refused"). The next sync-now
                // ends the backoff and must get through at once: a backoff of the HTTP client's
                // own would fail it too.
                synced = try await system.sync("gw-a")
            }
            #expect(synced.status == 200, "\(synced.body)")
            #expect(synced.json["accepted"]?.int == 1)
        }
    }

    /// While every uplink is down by its probe, a write cannot call for a wake: the scheduler
    /// does not read the outbox again for each one, and everything goes once the cloud is back.
    @Test func writesWhileNoUplinkIsAvailableDoNotWakeTheScheduler() async throws {
        let orders = SystemConfig.Table(
            "orders", columns: ["customer TEXT"], conflict: "last_writer_wins", upload: #"{ max_delay = "1s" }"#)
        try await SyncSystem.run(
            SyncSystem(config: SyncSystem.config(tables: [orders])), gateways: ["gw-a"],
            adjust: { _, config in
                for i in config.uplinks.indices { config.uplinks[i].probeInterval = .seconds(1) }
            }
        ) { system in
            try await system.stopCloud()
            let stats = { @Sendable () async throws -> JSONValue in
                try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
            }
            #expect(try await eventually(within: .seconds(60)) {
                try await stats()["uplinks"]?.array?.first?["available"]?.bool == false
            })
            // A first write whose deadline passes with no uplink: from then on each new
            // deadline comes before any wake the scheduler plans.
            #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/w-first", body: #"{"values":{"customer":"c"}}"#).status == 200)
            #expect(try await eventually(within: .seconds(60)) {
                try await stats()["tables"]?["orders"]?["deadline_in_ms"]?.int ?? 0 < 0
            })
            let before = try await stats()["sync"]?["decisions"]?.int ?? -1
            for i in 0..<30 {
                let put = try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/w\(i)", body: #"{"values":{"customer":"c"}}"#)
                #expect(put.status == 200)
            }
            let after = try await stats()["sync"]?["decisions"]?.int ?? -1
            // A planned wake (a download period) may fall in between; thirty writes may not.
            #expect(after - before <= 2, "\(before) → \(after)")

            try await system.startCloud()
            #expect(try await eventually(within: .seconds(60)) {
                try await stats()["uplinks"]?.array?.first?["available"]?.bool == true
            })
            let arrived = try await eventually(within: .seconds(60)) {
                try await stats()["sync"]?["rows_accepted"]?.int == 31
            }
            #expect(arrived)
            #expect(try await stats()["tables"]?["orders"]?["outbox_pending"]?.int == 0)
        }
    }

    @Test func cloudDownThenUpDeliversEverythingOnce() async throws {
        try await SyncSystem.run { system in
            try await system.stopCloud()
            for i in 0..<20 {
                let put = try await system.gateway("gw-a", .PUT, "/v1/tables/notes/rows/n\(i)", body: #"{"values":{"body":"note \#(i)"}}"#)
                #expect(put.status == 200)
            }
            let queued = try await system.sync("gw-a", table: "notes")
            #expect(queued.status == 202)
            #expect(queued.json["status"]?.string == "queued")

            try await system.startCloud()
            var synced = try await system.sync("gw-a", table: "notes")
            if synced.status == 202 {
                // As in `aCloudBackAfterManyFailedConnectionsIsReachedAtOnce`: a retry under way
                // as the cloud came back may have connected a moment before it listened, and
                // the sync-now is answered with that failure (seen once in a full run under
                // load: "Connection refused"). The next one must get everything through.
                synced = try await system.sync("gw-a", table: "notes")
            }
            #expect(synced.status == 200, "\(synced.json)")
            #expect(synced.json["accepted"]?.int == 20)
            #expect(try await system.sync("gw-a", table: "notes").json["sent"]?.int == 0)

            let cloudStats = try await system.cloudRequest(.GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]).json
            #expect(cloudStats["tables"]?["notes"]?["version"]?.int == 20)
            #expect(cloudStats["tables"]?["notes"]?["live"]?.int == 20)

            #expect(try await system.sync("gw-b", table: "notes").status == 200)
            let page = try await system.gateway("gw-b", .GET, "/v1/tables/notes/rows?limit=100")
            #expect(page.json["rows"]?.array?.count == 20)
        }
    }
}
