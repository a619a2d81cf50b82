import DallyCore
import DallyTestSupport
import Testing

/// A notify answer that carries the change itself, and a page read once for every gateway at
/// the same cursor (PROTOCOL.md §7.3), on a real cloud over HTTP.
@Suite struct NotifyInlineTests {
    /// The cloud alone (no gateway polls to disturb its counts), running for `body`. Its wall
    /// clock stands still: a shared page serves within a window of it, which a slow run must
    /// not cross between two requests.
    static func cloudOnly(_ body: (SyncSystem) async throws -> Void) async throws {
        let system = SyncSystem()
        do {
            try await system.live.startCloud(
                try system.config.cloud(dataDirectory: system.live.directory("cloud"), extra: SyncSystem.cloudLimits),
                now: { 1_795_000_000_000 })
            try await body(system)
            try await system.shutdown()
        } catch {
            try? await system.shutdown()
            throw error
        }
    }

    static func notifyCounts(_ system: SyncSystem) async throws -> JSONValue? {
        let stats = try await system.cloudRequest(
            .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")])
        return stats.json["notify"]
    }

    /// Orders `o0`…`o59` from gw-a's replica `r-test` in one batch: more than a page
    /// (`max_page_rows` is 50 in SyncSystem's cloud).
    static func postMoreThanAPage(_ system: SyncSystem) async throws {
        let rows = (0..<60).map { #"["o\#($0)",null,1000,"put","c\#($0)",1]"# }
        #expect(try await system.cloudRequest(.POST, "/v1/batches", body: CloudInputTests.batch(rows: rows)).status == 200)
    }

    @Test func theAnswerCarriesTheChangeAndLeavesOutTheAskersOwnRows() async throws {
        try await Self.cloudOnly { system in
            let put = try await system.cloudRequest(
                .POST, "/v1/batches", body: CloudInputTests.batch(rows: [#"["o1",null,1000,"put","Ada",1.5]"#]))
            #expect(put.status == 200)

            let other = try await system.cloudRequest(
                .GET, "/v1/notify?versions=orders:0,notes:0&replica=r-b&inline=orders,notes", as: "gw-b")
            #expect(other.status == 200)
            #expect(other.json["versions"] == .object([JSONMember("orders", .int(1))]))
            let pages = try #require(other.json["changes"]?.array)
            #expect(pages.count == 1)
            #expect(pages.first?["table"]?.string == "orders")
            #expect(pages.first?["since"]?.int == 0)
            #expect(pages.first?["version"]?.int == 1)
            #expect(pages.first?["more"]?.bool == false)
            #expect(pages.first?["rows"]?.array?.first?.array?.first?.string == "o1")
            #expect(pages.first?["rows"]?.array?.first?.array?[4].string == "Ada")

            // Without `inline`, the answer is versions only, as before.
            let plain = try await system.cloudRequest(.GET, "/v1/notify?versions=orders:0&replica=r-b", as: "gw-b")
            #expect(plain.json["versions"]?["orders"]?.int == 1)
            #expect(plain.json["changes"] == nil)

            // The writer's own change: nothing to tell it, whether it waits or not.
            let own = try await system.cloudRequest(
                .GET, "/v1/notify?versions=orders:0&replica=r-test&inline=orders&wait=0", as: "gw-a")
            #expect(own.status == 200)
            #expect(own.json["versions"] == .object([]))
            #expect(own.json["changes"] == nil)
        }
    }

    @Test func gatewaysAtOneCursorShareOnePageRead() async throws {
        try await Self.cloudOnly { system in
            #expect(
                try await system.cloudRequest(
                    .POST, "/v1/batches", body: CloudInputTests.batch(rows: [#"["o1",null,1000,"put","Ada",1.5]"#])
                ).status == 200)
            let before = try await Self.notifyCounts(system)
            var answers: [JSONValue] = []
            for (gateway, replica) in [("gw-b", "r-1"), ("gw-b", "r-2"), ("gw-a", "r-test"), ("gw-a", "r-3")] {
                let reply = try await system.cloudRequest(
                    .GET, "/v1/notify?versions=orders:0&replica=\(replica)&inline=orders&wait=0", as: gateway)
                answers.append(reply.json)
            }
            let after = try await Self.notifyCounts(system)
            let reads = (after?["page_reads"]?.int ?? 0) - (before?["page_reads"]?.int ?? 0)
            let shared = (after?["pages_shared"]?.int ?? 0) - (before?["pages_shared"]?.int ?? 0)
            #expect(reads == 1)
            #expect(shared == 3)
            // The writer got nothing back; the other three the same page.
            #expect(answers[2]["versions"] == .object([]))
            #expect(answers[0] == answers[1])
            #expect(answers[0] == answers[3])
            #expect((after?["inline_pages"]?.int ?? 0) - (before?["inline_pages"]?.int ?? 0) == 3)

            // The shared page serves the changes route as well, and a new commit makes it stale.
            let page = try await system.cloudRequest(.GET, "/v1/tables/orders/changes?since=0&replica=r-9", as: "gw-b")
            #expect(page.json["rows"]?.array?.count == 1)
            #expect(
                try await system.cloudRequest(
                    .POST, "/v1/batches",
                    body: CloudInputTests.batch(id: "b2", rows: [#"["o2",null,1000,"put","Bo",2]"#])
                ).status == 200)
            let fresh = try await system.cloudRequest(.GET, "/v1/tables/orders/changes?since=0&replica=r-9", as: "gw-b")
            #expect(fresh.json["rows"]?.array?.count == 2)
            // The first changes read was the notify polls' page (same cursor, same limit); only
            // the one after the commit read the store.
            let last = try await Self.notifyCounts(system)
            #expect((last?["page_reads"]?.int ?? 0) - (after?["page_reads"]?.int ?? 0) == 1)
        }
    }

    @Test func aChangeLargerThanAPageIsListedForAPullNotCarried() async throws {
        try await Self.cloudOnly { system in
            try await Self.postMoreThanAPage(system)
            let reply = try await system.cloudRequest(
                .GET, "/v1/notify?versions=orders:0&replica=r-b&inline=orders", as: "gw-b")
            #expect(reply.json["versions"]?["orders"]?.int == 60)
            #expect(reply.json["changes"] == nil)
            // From the cursor of the first page, the remaining ten fit.
            let rest = try await system.cloudRequest(
                .GET, "/v1/notify?versions=orders:50&replica=r-b&inline=orders", as: "gw-b")
            #expect(rest.json["changes"]?.array?.first?["rows"]?.array?.count == 10)
        }
    }

    /// A gateway's own batch larger than a page is not news to it: it would otherwise pull
    /// after every large batch it sent (a drain's every batch), for nothing.
    @Test func aBatchOfItsOwnLargerThanAPageIsNotTold() async throws {
        try await Self.cloudOnly { system in
            try await Self.postMoreThanAPage(system)
            let own = try await system.cloudRequest(
                .GET, "/v1/notify?versions=orders:0&replica=r-test&inline=orders&wait=0", as: "gw-a")
            #expect(own.status == 200)
            #expect(own.json["versions"] == .object([]))
            #expect(own.json["changes"] == nil)

            // A change from elsewhere past the writer's own pages is told, for a pull.
            let other = CloudInputTests.batch(
                id: "b2", gateway: "gw-b", replica: "r-b", rows: [#"["p1",null,1000,"put","Bo",2]"#])
            #expect(try await system.cloudRequest(.POST, "/v1/batches", as: "gw-b", body: other).status == 200)
            let told = try await system.cloudRequest(
                .GET, "/v1/notify?versions=orders:0&replica=r-test&inline=orders&wait=0", as: "gw-a")
            #expect(told.json["versions"]?["orders"]?.int == 61)
            #expect(told.json["changes"] == nil)
        }
    }

    @Test func aBadInlineNameIsRefusedAndChangesNothing() async throws {
        try await Self.cloudOnly { system in
            let reply = try await system.cloudRequest(
                .GET, "/v1/notify?versions=orders:0&inline=orders,no%20such", as: "gw-b")
            #expect(reply.status == 400)
            #expect(reply.errorCode == "bad_query")
            #expect(reply.json["error"]?["field"]?.string == "inline")
            #expect(try await system.cloudRequest(.GET, "/healthz", as: nil).status == 200)
        }
    }

    /// A replica id that no batch could carry (a NUL, a slash, too long) names no origin: refused
    /// on the notify and changes routes alike, as a batch's `replica` is.
    @Test(arguments: ["a%00b", "a%2Fb", String(repeating: "r", count: 65)])
    func aBadReplicaIsRefused(_ replica: String) async throws {
        try await Self.cloudOnly { system in
            for path in ["/v1/notify?versions=orders:0&wait=0&replica=", "/v1/tables/orders/changes?since=0&replica="] {
                let reply = try await system.cloudRequest(.GET, path + replica, as: "gw-b")
                #expect(reply.status == 400, "\(path)")
                #expect(reply.errorCode == "bad_query")
                #expect(reply.json["error"]?["field"]?.string == "replica")
            }
            #expect(try await system.cloudRequest(.GET, "/v1/tables/orders/changes?since=0&replica=r-1", as: "gw-b").status == 200)
        }
    }

    /// Two real gateways: B takes A's change from its notify answer and never pulls for it.
    @Test func aGatewayAppliesTheCarriedChangeWithoutAPull() async throws {
        try await SyncSystem.run { system in
            // Wait for B's first poll, and for whatever it pulled at start.
            _ = try await system.sync("gw-b")
            let before = try await system.gateway("gw-b", .GET, "/stats", token: SyncSystem.gatewayAdmin).json["sync"]
            let put = try await system.gateway(
                "gw-a", .PUT, "/v1/tables/orders/rows/o1", body: #"{"values":{"customer":"Ada","total":12.5}}"#)
            #expect(put.status == 200)
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 1)
            let arrived = try await system.awaitChange(on: "gw-b", table: "orders", "o1")
            #expect(arrived["values"]?["customer"]?.string == "Ada")

            let after = try await system.gateway("gw-b", .GET, "/stats", token: SyncSystem.gatewayAdmin).json["sync"]
            #expect((after?["inline_pages"]?.int ?? 0) - (before?["inline_pages"]?.int ?? 0) >= 1)
            #expect(after?["pulls"] == before?["pulls"])
            #expect((after?["rows_received"]?.int ?? 0) - (before?["rows_received"]?.int ?? 0) == 1)
        }
    }

    /// Two real gateways: A's own batch, larger than a page, brings A no notification, so no
    /// pull; B's change after it is told, on the same stream, behind where A's would have been.
    @Test func aGatewaysOwnBatchLargerThanAPageBringsItNoNotification() async throws {
        try await SyncSystem.run { system in
            // Wait for A's first poll, and for whatever it pulled at start.
            _ = try await system.sync("gw-a")
            let before = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json["sync"]
            // max_page_rows is 50 in SyncSystem's cloud.
            let rows = (0..<60).map { #"{"id":"a\#($0)","values":{"customer":"c\#($0)","total":1}}"# }
            let written = try await system.gateway(
                "gw-a", .POST, "/v1/tables/orders/batch", body: #"{"created":[\#(rows.joined(separator: ","))]}"#)
            #expect(written.status == 200)
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 60)
            let put = try await system.gateway(
                "gw-b", .PUT, "/v1/tables/orders/rows/b1", body: #"{"values":{"customer":"Bo","total":2}}"#)
            #expect(put.status == 200)
            #expect(try await system.sync("gw-b").json["accepted"]?.int == 1)
            _ = try await system.awaitChange(on: "gw-a", table: "orders", "b1")

            let after = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json["sync"]
            #expect((after?["notifications"]?.int ?? 0) - (before?["notifications"]?.int ?? 0) == 1, "\(after ?? .null)")
            #expect(after?["pulls"] == before?["pulls"])
        }
    }

    /// A cloud from before `inline` refuses the parameter: the gateway polls without it and
    /// pulls what it is told of.
    @Test func aGatewayOnAnOlderCloudPollsWithoutInlineAndPulls() async throws {
        try await UplinkSystem.run(notifyNetworks: ["wifi"]) { system in
            system.wifi.refuseInline(true)
            let put = try await system.base.cloudRequest(
                .POST, "/v1/batches", as: "gw-b",
                body: CloudInputTests.batch(gateway: "gw-b", rows: [#"["o1",null,1000,"put","Ada",1.5]"#]))
            #expect(put.status == 200)
            let arrived = try await eventually(within: .seconds(60)) {
                try await system.call(.GET, "/v1/tables/orders/rows/o1").status == 200
            }
            #expect(arrived)
            let notifies = system.wifi.exchanges.filter { $0.path == "/v1/notify" }
            #expect(notifies.first?.forwarded == false)
            #expect(notifies.contains { $0.forwarded })
            let stats = try await system.stats()
            #expect(stats["sync"]?["inline_pages"]?.int == 0)
            #expect((stats["sync"]?["pulls"]?.int ?? 0) >= 1)
        }
    }
}
