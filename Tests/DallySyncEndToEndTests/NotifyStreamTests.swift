import AsyncHTTPClient
import DallyCore
import DallyTestSupport
import Foundation
import NIOCore
import Testing

/// The notify stream (PROTOCOL.md §7.3.1): one request held open, a line per change, on a real
/// cloud over HTTP and between real gateways.
@Suite struct NotifyStreamTests {
    /// Opens `GET path` as `gateway` on the cloud and yields each line of the answer, parsed,
    /// as it arrives; the task reading it, to cancel.
    static func open(_ system: SyncSystem, _ path: String, as gateway: String)
        -> (AsyncThrowingStream<JSONValue, any Error>, Task<Void, Never>)
    {
        let (lines, sink) = AsyncThrowingStream<JSONValue, any Error>.makeStream()
        let credentials = "\(gateway):\(SyncSystem.secrets[gateway] ?? "")"
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(system.cloudServer.port)\(path)")
        request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        let reader = Task { [request, http = system.http] in
            do {
                let response = try await http.execute(request, timeout: .seconds(60))
                #expect(response.headers.first(name: "Content-Type") == "application/x-ndjson")
                var pending = ""
                for try await piece in response.body {
                    pending += String(buffer: piece)
                    while let newline = pending.firstIndex(of: "\n") {
                        sink.yield(try JSONParser.parse(String(pending[..<newline])))
                        pending = String(pending[pending.index(after: newline)...])
                    }
                }
                #expect(pending.isEmpty, "bytes after the last line: \(pending)")
                sink.finish()
            } catch {
                sink.finish(throwing: error)
            }
        }
        return (lines, reader)
    }

    static func post(_ system: SyncSystem, id: String, gateway: String, row: String) async throws {
        let reply = try await system.cloudRequest(
            .POST, "/v1/batches", as: gateway, body: CloudInputTests.batch(id: id, gateway: gateway, rows: [row]))
        #expect(reply.status == 200, "\(reply.body)")
    }

    static func stats(_ system: SyncSystem, _ gateway: String) async throws -> JSONValue {
        try await system.gateway(gateway, .GET, "/stats", token: SyncSystem.gatewayAdmin).json
    }

    /// Writes rows `ids` at gateway A, one after another, each synced and awaited at B; B's
    /// `/stats` before and after.
    static func changesFromAToB(_ system: SyncSystem, ids: [String]) async throws -> (JSONValue, JSONValue) {
        let before = try await stats(system, "gw-b")
        for id in ids {
            let put = try await system.gateway(
                "gw-a", .PUT, "/v1/tables/orders/rows/\(id)", body: #"{"values":{"customer":"c-\#(id)","total":1}}"#)
            #expect(put.status == 200)
            #expect(try await system.sync("gw-a").json["accepted"]?.int == 1)
            _ = try await system.awaitChange(on: "gw-b", table: "orders", id)
        }
        return (before, try await stats(system, "gw-b"))
    }

    static func grew(_ counter: String, _ before: JSONValue, _ after: JSONValue) -> Int64 {
        (after["sync"]?[counter]?.int ?? 0) - (before["sync"]?[counter]?.int ?? 0)
    }

    static func notifyPolls(_ stats: JSONValue) -> Int64 { stats["uplinks"]?.array?.first?["notify_polls"]?.int ?? -1 }

    @Test func oneRequestCarriesEveryChangeAndLeavesOutTheAskersOwn() async throws {
        try await NotifyInlineTests.cloudOnly { system in
            // gw-a's replica r-test follows orders from version 0, inline.
            let (lines, reader) = Self.open(
                system, "/v1/notify?versions=orders:0&replica=r-test&inline=orders&wait=30&stream=1", as: "gw-a")
            defer { reader.cancel() }
            var next = lines.makeAsyncIterator()

            try await Self.post(system, id: "b1", gateway: "gw-b", row: #"["o1",null,1000,"put","Ada",1.5]"#)
            let first = try #require(try await next.next())
            #expect(first["versions"] == .object([JSONMember("orders", .int(1))]))
            let page = try #require(first["changes"]?.array?.first)
            #expect(page["since"]?.int == 0)
            #expect(page["version"]?.int == 1)
            #expect(page["rows"]?.array?.map { $0.array?.first?.string } == ["o1"])

            // Its own change (version 2) is not told; the next change from elsewhere comes
            // labelled from the cursor it holds (1), with only the other replica's row.
            try await Self.post(system, id: "b2", gateway: "gw-a", row: #"["o2",null,1000,"put","Bo",2]"#)
            try await Self.post(system, id: "b3", gateway: "gw-b", row: #"["o3",null,1000,"put","Cy",3]"#)
            let second = try #require(try await next.next())
            #expect(second["versions"]?["orders"]?.int == 3)
            let after = try #require(second["changes"]?.array?.first)
            #expect(after["since"]?.int == 1)
            #expect(after["version"]?.int == 3)
            #expect(after["rows"]?.array?.map { $0.array?.first?.string } == ["o3"])

            // Both came on the one request, which the cloud still holds.
            let stats = try await system.cloudRequest(
                .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")])
            #expect(stats.json["notify"]?["waiting"]?.int == 1, "\(stats.json["notify"] ?? .null)")
        }
    }

    /// A line the gateway never read (its stream was cut as the line went) does not move the
    /// cursor the cloud knows it by: its next pull, from the cursor it holds, is answered from
    /// there, not with a resync of the whole table as if its data directory had gone back.
    @Test func aPageCarriedOnACutStreamDoesNotMakeTheNextPullAResync() async throws {
        try await NotifyInlineTests.cloudOnly { system in
            try await Self.post(system, id: "b1", gateway: "gw-b", row: #"["o1",null,1000,"put","Ada",1.5]"#)
            let pull = Array(
                #"{"batch":"p1","gateway":"gw-a","replica":"r-test","since":{"orders":1},"sections":[]}"#.utf8)
            #expect(try await system.cloudRequest(.POST, "/v1/batches", as: "gw-a", body: pull).status == 200)

            let (lines, reader) = Self.open(
                system, "/v1/notify?versions=orders:1&replica=r-test&inline=orders&wait=30&stream=1", as: "gw-a")
            var next = lines.makeAsyncIterator()
            try await Self.post(system, id: "b2", gateway: "gw-b", row: #"["o2",null,1000,"put","Bo",2]"#)
            let carried = try #require(try await next.next())
            #expect(carried["changes"]?.array?.first?["version"]?.int == 2)
            reader.cancel()

            let again = Array(
                #"{"batch":"p2","gateway":"gw-a","replica":"r-test","since":{"orders":1},"sections":[]}"#.utf8)
            let answer = try await system.cloudRequest(.POST, "/v1/batches", as: "gw-a", body: again)
            #expect(answer.status == 200)
            let page = try #require(answer.json["changes"]?.array?.first)
            #expect(page["resync"] == nil, "\(answer.body)")
            #expect(page["since"]?.int == 1)
            #expect(page["rows"]?.array?.map { $0.array?.first?.string } == ["o2"])
        }
    }

    @Test func aChangeTooLargeForAStreamLineIsNamedForAPull() async throws {
        try await NotifyInlineTests.cloudOnly { system in
            let (lines, reader) = Self.open(
                system, "/v1/notify?versions=orders:0&replica=r-test&inline=orders&wait=30&stream=1", as: "gw-a")
            defer { reader.cancel() }
            var next = lines.makeAsyncIterator()
            // 40 rows of 500-character names: one page (max_page_rows is 50), over 16 KiB.
            let name = String(repeating: "n", count: 500)
            let rows = (0..<40).map { #"["w\#($0)",null,1000,"put","\#(name)",1]"# }
            let big = try await system.cloudRequest(
                .POST, "/v1/batches", as: "gw-b", body: CloudInputTests.batch(id: "big", gateway: "gw-b", rows: rows))
            #expect(big.status == 200)
            let first = try #require(try await next.next())
            #expect(first["versions"]?["orders"]?.int == 40)
            #expect(first["changes"] == nil)
            // The gateway pulls that table now: the stream no longer carries it inline.
            try await Self.post(system, id: "small", gateway: "gw-b", row: #"["s1",null,1000,"put","Sy",1]"#)
            let second = try #require(try await next.next())
            #expect(second["versions"]?["orders"]?.int == 41)
            #expect(second["changes"] == nil)
        }
    }

    @Test func theStreamEndsWithAnEmptyLineWhenItsWaitRunsOut() async throws {
        try await NotifyInlineTests.cloudOnly { system in
            let (lines, reader) = Self.open(system, "/v1/notify?versions=orders:0&wait=1&stream=1", as: "gw-b")
            defer { reader.cancel() }
            var all: [JSONValue] = []
            for try await line in lines { all.append(line) }
            #expect(all == [.object([JSONMember("versions", .object([]))])])
        }
    }

    /// A stream held when the cloud begins to stop ends with its end line; one asked for
    /// after is refused with Retry-After, so gateways back off rather than ask again at once.
    @Test func aCloudThatIsStoppingEndsItsStreamsAndRefusesNewOnes() async throws {
        try await NotifyInlineTests.cloudOnly { system in
            let (lines, reader) = Self.open(system, "/v1/notify?versions=orders:0&wait=30&stream=1", as: "gw-b")
            defer { reader.cancel() }
            let hub = try #require(system.cloud?.hub)
            // Parked before it closes: wait until the stream's waiter is held.
            #expect(try await eventually(within: .seconds(60)) { hub.waiting == 1 })
            hub.close()
            var all: [JSONValue] = []
            for try await line in lines { all.append(line) }
            #expect(all == [.object([JSONMember("versions", .object([]))])])

            for path in ["/v1/notify?versions=orders:0&wait=30&stream=1", "/v1/notify?versions=orders:0&wait=30"] {
                let refused = try await system.cloudRequest(.GET, path, as: "gw-b")
                #expect(refused.status == 503)
                #expect(refused.errorCode == "shutting_down")
                #expect(refused.headers.first(name: "Retry-After") == "1")
            }
        }
    }

    @Test func aBadStreamValueIsRefusedAndChangesNothing() async throws {
        try await NotifyInlineTests.cloudOnly { system in
            let reply = try await system.cloudRequest(.GET, "/v1/notify?versions=orders:0&stream=maybe", as: "gw-b")
            #expect(reply.status == 400)
            #expect(reply.errorCode == "bad_query")
            #expect(reply.json["error"]?["field"]?.string == "stream")
            #expect(try await system.cloudRequest(.GET, "/healthz", as: nil).status == 200)
        }
    }

    /// Two real gateways: B takes each of A's changes from its one stream, with no pull and
    /// no new request per change.
    @Test func aGatewayTakesChangeAfterChangeOnOneStream() async throws {
        // A stream lasts notify_wait: held 120 s, the five changes fit in one stream however
        // loaded the machine is (at 10 s, a slow run saw the stream end and start again).
        try await SyncSystem.run(adjust: { id, config in
            if id == "gw-b" { config.cloud?.notifyWait = .seconds(120) }
        }) { system in
            _ = try await system.sync("gw-b")
            let connected = try await eventually(within: .seconds(30)) {
                try await Self.stats(system, "gw-b")["sync"]?["notify_connected"]?.int == 1
            }
            #expect(connected)
            let (before, after) = try await Self.changesFromAToB(system, ids: (0..<5).map { "o\($0)" })
            #expect(after["sync"]?["pulls"] == before["sync"]?["pulls"])
            #expect(Self.grew("rows_received", before, after) == 5)
            #expect(Self.grew("inline_pages", before, after) == 5)
            #expect(Self.notifyPolls(after) == Self.notifyPolls(before), "\(after["uplinks"] ?? .null)")
        }
    }

    /// Through a real nginx configured as docs/OPERATIONS.md shows: gateway B's one stream
    /// (held 60 s) carries each of A's changes as it happens, with no new request; held back
    /// until the stream ended, none would arrive before B asked again.
    @Test func aStreamPassesThroughNginxAsItComes() async throws {
        let system = SyncSystem()
        var front: NginxFront?
        do {
            try await system.startCloud()
            try await system.startGateway("gw-a")
            front = try await NginxFront.start(
                upstreams: ["127.0.0.1:\(system.cloudServer.port)"], directory: system.live.directory("nginx"))
            var config = try system.gatewayConfig("gw-b")
            config.cloud?.url = front?.url ?? ""
            for i in config.uplinks.indices { config.uplinks[i].url = front?.url ?? "" }
            config.cloud?.notifyWait = .seconds(60)
            try await system.live.startGateway("gw-b", config)
            _ = try await system.sync("gw-b")
            let connected = try await eventually(within: .seconds(30)) {
                try await Self.stats(system, "gw-b")["sync"]?["notify_connected"]?.int == 1
            }
            #expect(connected)
            let (before, after) = try await Self.changesFromAToB(system, ids: (0..<3).map { "n\($0)" })
            #expect(Self.notifyPolls(after) == Self.notifyPolls(before), "\(after["uplinks"] ?? .null)")
            #expect(Self.grew("inline_pages", before, after) == 3)
            #expect(after["sync"]?["pulls"] == before["sync"]?["pulls"])
            front?.stop()
            try await system.shutdown()
        } catch {
            front?.stop()
            try? await system.shutdown()
            throw error
        }
    }

    /// A cloud from before streams refuses `stream`: the gateway polls it instead, and still
    /// gets every change.
    @Test func aGatewayOnACloudThatDoesNotStreamPolls() async throws {
        try await UplinkSystem.run(notifyNetworks: ["wifi"]) { system in
            system.wifi.refuseStream(true)
            let refused = try await eventually(within: .seconds(30)) {
                system.wifi.exchanges.contains { $0.path == "/v1/notify" && !$0.forwarded }
            }
            #expect(refused)
            // The poll that follows the refusal is on its way before the change is written, so
            // the change can only be announced by it (or by a later poll).
            let polling = try await eventually(within: .seconds(30)) {
                system.wifi.started.filter { $0 == "/v1/notify" }.count >= 2
            }
            #expect(polling)
            let put = try await system.base.cloudRequest(
                .POST, "/v1/batches", as: "gw-b",
                body: CloudInputTests.batch(gateway: "gw-b", rows: [#"["o1",null,1000,"put","Ada",1.5]"#]))
            #expect(put.status == 200)
            let arrived = try await eventually(within: .seconds(60)) {
                try await system.call(.GET, "/v1/tables/orders/rows/o1").status == 200
            }
            #expect(arrived)
            // The change was announced by a poll, answered and forwarded. A catch-up pull may
            // bring the row a moment before the poll's answer is counted, hence the wait.
            let announced = try await eventually(within: .seconds(30)) {
                system.wifi.exchanges.filter { $0.path == "/v1/notify" }.dropFirst().contains { $0.forwarded }
            }
            #expect(announced)
            let notifies = system.wifi.exchanges.filter { $0.path == "/v1/notify" }
            #expect(notifies.first?.streamed == true)
            #expect(notifies.first?.forwarded == false)
            #expect(notifies.dropFirst().allSatisfy { !$0.streamed && $0.forwarded })
        }
    }
}
