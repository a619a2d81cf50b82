import DallyConfig
import DallyCore
import Testing

/// A gateway with two tables that share `user_id` and a feed-filterable `status`, an app token
/// that reads everything and a phone token pinned to user u7.
enum FilteredFeedConfig {
    static let appToken = "app-token-0123456789abc"
    static let phoneToken = "phone-token-0123456789abc"

    static func make() throws -> GatewayConfig {
        try GatewayConfig.parse(
            text: """
                [server]
                host = "127.0.0.1"
                port = 0
                data_dir = "\(LiveGateway.temporaryDirectory())"

                [admin]
                token = "\(LiveGateway.adminToken)"

                [[tables]]
                name = "tasks"
                columns = ["user_id TEXT", "status TEXT", "title TEXT"]
                scope_columns = ["status"]

                [[tables]]
                name = "notes"
                columns = ["user_id TEXT", "status TEXT"]
                scope_columns = ["status"]

                [[clients]]
                name = "app"
                token = "\(appToken)"
                read = ["*"]
                write = ["*"]

                [[clients]]
                name = "phone"
                token = "\(phoneToken)"
                read = ["*"]
                write = ["*"]
                scope = { tasks = { user_id = "u7" }, notes = { user_id = "u7" } }
                """,
            file: "<filtered-feed>")
    }
}

/// `where=` on the changes feeds, through real HTTP: long-polls woken only by matching
/// changes or by rows leaving the filter (`left` entries), and cursors that pass skipped rows.
@Suite("End to end: filtered changes feeds")
struct FilteredFeedEndToEndTests {
    let app = FilteredFeedConfig.appToken

    /// Waits, boundedly, for the gateway to hold `count` long-polls (as LongPollEndToEndTests).
    func parked(_ gw: LiveGateway, _ count: Int) async throws {
        for _ in 0..<2_000 where gw.hub.waiting != count {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(gw.hub.waiting == count)
    }

    func put(_ gw: LiveGateway, _ path: String, _ values: String, token: String = FilteredFeedConfig.appToken) async throws
        -> LiveGateway.Reply
    {
        try await gw.send(.PUT, path, token: token, body: #"{"values":\#(values)}"#)
    }

    func ids(_ reply: LiveGateway.Reply) -> [String] {
        reply.json["changes"]?.array?.compactMap { $0["id"]?.string } ?? []
    }

    @Test func aFilteredLongPollIsNotAnsweredByANonMatchingWrite() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            async let poll = gw.send(.GET, "/v1/tables/tasks/changes?since=0&wait=60&where=status:open", token: app)
            try await parked(gw, 1)
            // Had the non-matching write answered the poll, its answer would be empty.
            _ = try await put(gw, "/v1/tables/tasks/rows/x", #"{"status":"done"}"#)
            _ = try await put(gw, "/v1/tables/tasks/rows/y", #"{"status":"open"}"#)
            let reply = try await poll
            #expect(reply.status == 200)
            #expect(ids(reply) == ["y"])
            // A read that finds only rows the filter skips still moves its cursor past them.
            _ = try await put(gw, "/v1/tables/tasks/rows/z", #"{"status":"done"}"#)
            let skipped = try await gw.send(.GET, "/v1/tables/tasks/changes?since=2&where=status:open", token: app)
            #expect(skipped.json["changes"]?.array?.isEmpty == true)
            #expect(skipped.json["next_since"]?.int == 3)
        }
    }

    @Test func aFilteredLongPollIsWokenByAMatchingWrite() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            async let poll = gw.send(.GET, "/v1/tables/tasks/changes?since=0&wait=60&where=status:open", token: app)
            try await parked(gw, 1)
            _ = try await put(gw, "/v1/tables/tasks/rows/a", #"{"status":"done"}"#)
            _ = try await put(gw, "/v1/tables/tasks/rows/b", #"{"status":"open"}"#)
            let reply = try await poll
            #expect(ids(reply) == ["b"])
            #expect(reply.json["next_since"]?.int == 2)
        }
    }

    @Test func aRowLeavingTheFilterWakesItsWaiterAsALeftEntry() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            _ = try await put(gw, "/v1/tables/tasks/rows/c", #"{"status":"open"}"#)
            _ = try await put(gw, "/v1/tables/tasks/rows/never", #"{"status":"done"}"#)
            async let poll = gw.send(.GET, "/v1/tables/tasks/changes?since=2&wait=60&where=status:open", token: app)
            try await parked(gw, 1)
            // A row that never matched changes again: not a left entry.
            _ = try await gw.send(.PATCH, "/v1/tables/tasks/rows/never", token: app, body: #"{"values":{"status":"later"}}"#)
            _ = try await gw.send(.PATCH, "/v1/tables/tasks/rows/c", token: app, body: #"{"values":{"status":"done"}}"#)
            let reply = try await poll
            let entries = try #require(reply.json["changes"]?.array)
            #expect(entries.count == 1)
            #expect(entries.first?["id"] == "c")
            #expect(entries.first?["table"] == "tasks")
            #expect(entries.first?["left"] == .bool(true))
            #expect(entries.first?["seq"]?.int == 4)
            // Shaped as a tombstone, so that a client that knows nothing of `left` drops the row.
            #expect(entries.first?["deleted"] == .bool(true))
            #expect(entries.first?["version"] == .null)
        }
    }

    @Test func theFeedOfSeveralTablesFiltersEachAndPassesSkippedRows() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            _ = try await put(gw, "/v1/tables/tasks/rows/t1", #"{"status":"open"}"#)
            _ = try await put(gw, "/v1/tables/notes/rows/n1", #"{"status":"open"}"#)
            _ = try await put(gw, "/v1/tables/notes/rows/n2", #"{"status":"done"}"#)
            let reply = try await gw.send(.GET, "/v1/changes?tables=tasks,notes&since=0&where=status:open", token: app)
            #expect(reply.status == 200)
            #expect(ids(reply) == ["t1", "n1"])
            #expect(reply.json["next_since"]?.int == 3)
            #expect(reply.json["more"] == .bool(false))
        }
    }

    @Test func aFeedFilterOnAColumnWithoutAMoveLogIsRefused() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            let reply = try await gw.send(.GET, "/v1/tables/tasks/changes?where=title:x", token: app)
            #expect(reply.status == 400)
            #expect(reply.errorCode == "bad_query")
            #expect(reply.body.contains("scope_columns"))
        }
    }

    /// Thousands of clauses went past SQLite's expression depth and were answered 500.
    @Test func tooManyWhereClausesAreRefusedOnEveryRead() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            let many = (0..<3_000).map { "where=status:s\($0)" }.joined(separator: "&")
            for path in ["/v1/tables/tasks/rows?", "/v1/tables/tasks/changes?", "/v1/changes?tables=tasks&"] {
                let reply = try await gw.send(.GET, path + many, token: app)
                #expect(reply.status == 400, "\(path)")
                #expect(reply.errorCode == "bad_query", "\(path)")
            }
            let few = (0..<32).map { _ in "where=status:open" }.joined(separator: "&")
            #expect(try await gw.send(.GET, "/v1/tables/tasks/rows?" + few, token: app).status == 200)
        }
    }
}
