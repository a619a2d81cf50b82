import DallyCore
import NIOHTTP1
import Testing

/// A client token pinned to `user_id = "u7"`, through real HTTP: it reads, writes and learns
/// only rows in its scope, whatever it asks.
@Suite("End to end: scoped client tokens")
struct ScopedTokenEndToEndTests {
    let app = FilteredFeedConfig.appToken
    let phone = FilteredFeedConfig.phoneToken

    /// Rows `mine` (u7, seq 1) and `other` (u8, seq 2) in `tasks`, written by the app.
    func seed(_ gw: LiveGateway) async throws {
        _ = try await gw.send(.PUT, "/v1/tables/tasks/rows/mine", token: app, body: #"{"values":{"user_id":"u7","status":"open"}}"#)
        _ = try await gw.send(.PUT, "/v1/tables/tasks/rows/other", token: app, body: #"{"values":{"user_id":"u8","status":"open"}}"#)
    }

    func ids(_ reply: LiveGateway.Reply, _ key: String) -> [String] {
        reply.json[key]?.array?.compactMap { $0["id"]?.string } ?? []
    }

    @Test func aScopedTokenReadsOnlyItsRowsWhateverItAsks() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            try await seed(gw)
            #expect(ids(try await gw.send(.GET, "/v1/tables/tasks/rows", token: phone), "rows") == ["mine"])
            #expect(ids(try await gw.send(.GET, "/v1/tables/tasks/rows?where=user_id:u8", token: phone), "rows") == [])
            let changes = try await gw.send(.GET, "/v1/tables/tasks/changes?since=0", token: phone)
            #expect(ids(changes, "changes") == ["mine"])
            #expect(changes.json["next_since"]?.int == 2)
            #expect(ids(try await gw.send(.GET, "/v1/changes?since=0&where=status:open", token: phone), "changes") == ["mine"])
            #expect(ids(try await gw.send(.GET, "/v1/tables/tasks/rows", token: app), "rows") == ["mine", "other"])
        }
    }

    @Test func aRowOutsideTheScopeAnswersAsAMissingOne() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            try await seed(gw)
            let outside = try await gw.send(.GET, "/v1/tables/tasks/rows/other", token: phone)
            let missing = try await gw.send(.GET, "/v1/tables/tasks/rows/ghost", token: phone)
            #expect(outside.status == 404)
            #expect(outside.errorCode == missing.errorCode)
            #expect(outside.body.replacingOccurrences(of: "other", with: "ghost") == missing.body)
            for method in [HTTPMethod.PATCH, .DELETE] {
                let body = method == .PATCH ? #"{"values":{"status":"x"}}"# : nil
                let a = try await gw.send(method, "/v1/tables/tasks/rows/other", token: phone, body: body)
                let b = try await gw.send(method, "/v1/tables/tasks/rows/ghost", token: phone, body: body)
                #expect(a.status == 404)
                #expect(a.body.replacingOccurrences(of: "other", with: "ghost") == b.body)
            }
            #expect(try await gw.send(.GET, "/v1/tables/tasks/rows/mine", token: phone).status == 200)
        }
    }

    @Test func aScopedTokenCannotWriteOutsideItsScope() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            try await seed(gw)
            let replace = try await gw.send(.PUT, "/v1/tables/tasks/rows/other", token: phone, body: #"{"values":{"user_id":"u7"}}"#)
            #expect(replace.status == 403)
            #expect(replace.errorCode == "out_of_scope")
            #expect(!replace.body.contains("u8"))
            let create = try await gw.send(.PUT, "/v1/tables/tasks/rows/new", token: phone, body: #"{"values":{"user_id":"u8"}}"#)
            #expect(create.errorCode == "out_of_scope")
            let move = try await gw.send(.PATCH, "/v1/tables/tasks/rows/mine", token: phone, body: #"{"values":{"user_id":"u8"}}"#)
            #expect(move.status == 403)
            #expect(move.errorCode == "out_of_scope")
            let batch = try await gw.send(
                .POST, "/v1/tables/tasks/batch", token: phone,
                body: #"{"created":[{"id":"b1","values":{"user_id":"u7"}},{"id":"b2","values":{"user_id":"u9"}}]}"#)
            #expect(batch.status == 200)
            #expect(batch.body.contains("out_of_scope"))
            // Nothing outside changed: the app sees its rows as they were, and only b1 was created.
            let rows = try await gw.send(.GET, "/v1/tables/tasks/rows", token: app)
            #expect(ids(rows, "rows") == ["mine", "other", "b1"])
            #expect(rows.json["rows"]?.array?.first { $0["id"] == "other" }?["seq"]?.int == 2)
        }
    }

    @Test func aScopedFeedSeesItsRowsLeaveButNothingOfOthers() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            try await seed(gw)
            // Another user's row changes; the phone's own row moves to another user.
            _ = try await gw.send(.PATCH, "/v1/tables/tasks/rows/other", token: app, body: #"{"values":{"status":"done"}}"#)
            _ = try await gw.send(.PATCH, "/v1/tables/tasks/rows/mine", token: app, body: #"{"values":{"user_id":"u8"}}"#)
            let reply = try await gw.send(.GET, "/v1/tables/tasks/changes?since=2&wait=0", token: phone)
            let entries = try #require(reply.json["changes"]?.array)
            #expect(entries.count == 1)
            #expect(entries.first?["id"] == "mine")
            #expect(entries.first?["left"] == .bool(true))
            #expect(!reply.body.contains("u8"))
            #expect(reply.json["next_since"]?.int == 4)
        }
    }

    @Test func aScopedTokenSeesAndResolvesNoConflictOfItsScopedTables() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            #expect(try await gw.send(.GET, "/v1/conflicts", token: phone).json["conflicts"]?.array?.isEmpty == true)
            let listed = try await gw.send(.GET, "/v1/conflicts?table=tasks", token: phone)
            #expect(listed.status == 403 && listed.errorCode == "forbidden")
            let resolved = try await gw.send(.POST, "/v1/conflicts/tasks/other", token: phone, body: #"{"take":"local"}"#)
            #expect(resolved.status == 403 && resolved.errorCode == "forbidden")
            #expect(try await gw.send(.GET, "/v1/conflicts?table=tasks", token: app).status == 200)
        }
    }

    /// TinySync with a scoped token: it reads, writes and is told of deletions only within its
    /// scope, as on the row routes and the filtered feed (it was refused `403` before).
    @Test func aScopedTokenSyncsThroughTinySyncWithinItsScope() async throws {
        try await LiveGateway.run(try FilteredFeedConfig.make()) { gw in
            try await seed(gw)
            func entity(_ reply: LiveGateway.Reply) throws -> JSONValue {
                #expect(reply.status == 200, "\(reply.body)")
                return try #require(reply.json["entities"]?.array?.first)
            }
            func ids(_ entity: JSONValue, _ key: String) -> [String] {
                entity[key]?.array?.compactMap { $0.string ?? $0["id"]?.string } ?? []
            }
            let first = try await gw.send(
                .POST, "/v1/tinysync", token: phone,
                body: #"{"last_synced":null,"entities":[{"name":"tasks","scope":{},"created":[{"id":"p1","user_id":"u7"},{"id":"p2","user_id":"u9"}],"updated":[{"id":"other","status":"x"}],"deleted":["other"]}]}"#)
            let answer = try entity(first)
            #expect(ids(answer, "created") == ["mine"])
            #expect(ids(answer, "saved") == ["p1", "other"])  // "other" is, to this token, a row never here
            let refused = answer["errors"]?.array ?? []
            #expect(refused.count == 2)
            #expect(refused.contains { $0["id"] == "p2" && $0["code"] == "out_of_scope" })
            #expect(refused.contains { $0["id"] == "other" && $0["code"] == "not_found" })
            #expect(!first.body.contains("u8"))
            let lastSynced = try #require(first.json["last_synced"]?.string)

            // Outside the phone: its row moves away, another is deleted, one of another user's
            // rows is deleted and another changes.
            _ = try await gw.send(.PATCH, "/v1/tables/tasks/rows/p1", token: app, body: #"{"values":{"user_id":"u8"}}"#)
            _ = try await gw.send(.DELETE, "/v1/tables/tasks/rows/mine", token: app)
            _ = try await gw.send(.PUT, "/v1/tables/tasks/rows/theirs", token: app, body: #"{"values":{"user_id":"u8"}}"#)
            _ = try await gw.send(.DELETE, "/v1/tables/tasks/rows/theirs", token: app)
            _ = try await gw.send(.PUT, "/v1/tables/tasks/rows/new", token: app, body: #"{"values":{"user_id":"u7","status":"open"}}"#)
            let next = try await gw.send(
                .POST, "/v1/tinysync", token: phone, body: #"{"last_synced":"\#(lastSynced)","entities":[{"name":"tasks","scope":{"status":"open"}}]}"#)
            let changes = try entity(next)
            #expect(ids(changes, "updated") == ["new"])
            #expect(Set(ids(changes, "deleted")) == ["p1", "mine"])
            #expect(!next.body.contains("theirs") && !next.body.contains("u8"))
            // The app's rows are as the phone could not touch them.
            #expect(try await gw.send(.GET, "/v1/tables/tasks/rows/other", token: app).json["values"]?["status"] == "open")
        }
    }
}
