import DallyClocks
import DallyConfig
import DallyCore
import DallyTestSupport
import Foundation
import Testing

/// `POST /v1/tinysync` over real HTTP on 127.0.0.1, with raw JSON as a TinySync client sends
/// it (not Dally's client library).
@Suite("End to end: TinySync")
struct TinySyncEndToEndTests {
    static let author = "52212589594cc44541000016"

    /// The seed's `post` entity as a table, beside a table the reader token may not write.
    static func config() throws -> GatewayConfig {
        let system = SystemConfig(
            tables: [
                .init("post", columns: ["author_id TEXT", "body TEXT", "published_at INTEGER", "meta JSON"]),
                .init("notes", columns: ["body TEXT"]),
            ],
            gateways: [],
            clients: [
                .init(name: "app", token: LiveGateway.clientToken),
                .init(name: "reader", token: LiveGateway.readerToken, read: ["post"], write: nil),
            ],
            cloudAdminToken: "", gatewayAdminToken: LiveGateway.adminToken)
        return try system.gateway(
            "", dataDirectory: LiveGateway.temporaryDirectory(),
            extra: """
                [limits]
                max_rows_per_batch = 20
                """)
    }

    func sync(_ gw: LiveGateway, _ body: String, token: String? = LiveGateway.clientToken) async throws -> LiveGateway.Reply {
        try await gw.send(.POST, "/v1/tinysync", token: token, body: body, headers: [("Content-Type", "application/json")])
    }

    func ids(_ reply: LiveGateway.Reply, _ list: String, entity: Int = 0) -> [String] {
        (reply.json["entities"]?.array?[entity][list]?.array ?? []).map { $0["id"]?.string ?? $0.string ?? "?" }
    }

    @Test func theSeedsRequestRoundTripsIntoTheSeedsResponseShape() async throws {
        try await LiveGateway.run(Self.config()) { gw in
            // A post saved on the server earlier (the seed response's), and one outside the scope.
            _ = try await gw.send(
                .PUT, "/v1/tables/post/rows/521fa720594cc48c1d000042",
                body: #"{"values":{"author_id":"\#(Self.author)","body":"A post that was saved on the server"},"updated_at":1393813494000}"#)
            _ = try await gw.send(.PUT, "/v1/tables/post/rows/521fa720594cc48c1d000099", body: #"{"values":{"author_id":"other"}}"#)

            let reply = try await sync(gw, TinySyncSeed.request)
            #expect(reply.status == 200, "\(reply.body)")
            let entity = try #require(reply.json["entities"]?.array?.first)
            #expect(entity["name"] == "post")
            #expect(entity["scope"] == ["author_id": .string(Self.author)])
            #expect(entity["saved"] == ["521fa720594cc48c1d000003", "521fa720594cc48c1d000016"])
            #expect(entity["errors"] == [])
            // The client's last_synced (2014) precedes every mark: it gets its whole scope, as new.
            #expect(ids(reply, "created") == ["521fa720594cc48c1d000042"])
            #expect(entity["created"]?.array?.first?["updated_at"] == "2014-03-03T02:24:54.000Z")
            #expect(entity["created"]?.array?.first?["body"] == "A post that was saved on the server")
            #expect(entity["updated"] == [] && entity["deleted"] == [])
            let lastSynced = try #require(reply.json["last_synced"]?.string)
            #expect(lastSynced.hasSuffix("Z") && lastSynced.count == 24)

            let saved = try await gw.send(.GET, "/v1/tables/post/rows/521fa720594cc48c1d000003")
            #expect(saved.json["values"]?["body"] == "Some text in a new post...")
            #expect(saved.json["updated_at"]?.int == 1_392_683_034_000)  // 2014-02-17T17:23:54-0700
            #expect(try await gw.send(.GET, "/v1/tables/post/rows/521fa720594cc48c1d000016").status == 404)

            // The seed's response, sent back as a request, is read too (saved and errors ignored).
            #expect(try await sync(gw, TinySyncSeed.response).status == 200)
        }
    }

    @Test func aBadRowIsRefusedInErrorsWhileTheOthersAreSaved() async throws {
        try await LiveGateway.run(Self.config()) { gw in
            let reply = try await sync(
                gw,
                """
                {"last_synced": null, "entities": [{"name": "post", "scope": null, "created": [
                  {"id": "521fa720594cc48c1d000013", "body": 5},
                  {"id": "521fa720594cc48c1d000014", "body": "fine", "colour": "red"},
                  {"id": "521fa720594cc48c1d000015", "body": "fine"}], "updated": [], "deleted": []}]}
                """)
            #expect(reply.status == 200)
            let entity = try #require(reply.json["entities"]?.array?.first)
            #expect(entity["saved"] == ["521fa720594cc48c1d000015"])
            let errors = entity["errors"]?.array ?? []
            #expect(errors.map { $0["id"] } == ["521fa720594cc48c1d000013", "521fa720594cc48c1d000014"])
            #expect(errors.map { $0["field"] } == ["body", "colour"])
            #expect(errors.map { $0["code"] } == ["wrong_type", "unknown_column"])
            #expect(errors.allSatisfy { $0["message"]?.string?.isEmpty == false })
            #expect(try await gw.send(.GET, "/v1/tables/post/rows/521fa720594cc48c1d000013").status == 404)
        }
    }

    /// The Enterra trap: many rows with one timestamp, written between syncs in the same
    /// millisecond. Every answer's `last_synced`, sent back, resumes exactly after its rows.
    @Test func theReturnedLastSyncedNeverMissesARowOfTheSameMillisecondNorRepeatsOne() async throws {
        let clock = ManualClock()  // the wall clock never moves during this test
        try await LiveGateway.run(Self.config(), clock: clock, now: clock.wallMillis) { gw in
            func request(_ lastSynced: String?) -> String {
                let cursor = lastSynced.map { "\"\($0)\"" } ?? "null"
                return #"{"last_synced": \#(cursor), "entities": [{"name": "post", "scope": {"author_id": "u7"}}]}"#
            }
            func put(_ id: String, author: String = "u7") async throws {
                let reply = try await gw.send(
                    .PUT, "/v1/tables/post/rows/\(id)", body: #"{"values":{"author_id":"\#(author)"},"updated_at":5000}"#)
                #expect(reply.status == 200)
            }

            let first = try await sync(gw, request(nil))
            let l1 = try #require(first.json["last_synced"]?.string)
            try await put("r1")
            try await put("x1", author: "someone else")
            let second = try await sync(gw, request(l1))
            #expect(ids(second, "updated") == ["r1"])
            let l2 = try #require(second.json["last_synced"]?.string)
            #expect(l2 > l1)  // same millisecond on the clock, yet a later cursor

            for id in ["r2", "r3", "r4"] { try await put(id) }
            #expect(try await gw.send(.DELETE, "/v1/tables/post/rows/r1").status == 200)
            let third = try await sync(gw, request(l2))
            #expect(ids(third, "updated") == ["r2", "r3", "r4"])
            #expect(ids(third, "deleted") == ["r1"])
            let l3 = try #require(third.json["last_synced"]?.string)

            // Nothing new: nothing again, however often asked.
            for _ in 0..<3 {
                let again = try await sync(gw, request(l3))
                #expect(ids(again, "updated").isEmpty && ids(again, "deleted").isEmpty)
            }
            // A client that keeps only whole seconds resumes earlier: repeats, never misses.
            let seconds = String(l2.prefix(19)) + "Z"
            let coarse = try await sync(gw, request(seconds))
            #expect(Set(ids(coarse, "updated")).isSuperset(of: ["r2", "r3", "r4"]))
            #expect(ids(coarse, "deleted").contains("r1"))
        }
    }

    @Test func tinySyncConventionsWorkUnchanged() async throws {
        try await LiveGateway.run(Self.config()) { gw in
            let reply = try await sync(
                gw,
                """
                {"last_synced": "2000-01-01T01:00:00-0000", "entities": [{"name": "post",
                  "scope": {"author_id": "5221258959"},
                  "created": [{"id": "52ffa720594cc48c1d0000aa", "author_id": "5221258959",
                               "updated_at": "2014-02-17T17:23:54.250+01:00", "published_at": "2014-02-17T17:00:00Z",
                               "meta": {"tags": ["a"], "n": 18446744073709551615, "amount": 0.12345678901234567891},
                               "body": "x"}],
                  "updated": [{"id": "52ffa720594cc48c1d0000bb", "author_id": "5221258959", "body": "made offline"}],
                  "deleted": [{"id": "52ffa720594cc48c1d0000cc"}]}]}
                """)
            #expect(reply.status == 200, "\(reply.body)")
            #expect(reply.json["entities"]?.array?.first?["saved"]
                == ["52ffa720594cc48c1d0000aa", "52ffa720594cc48c1d0000bb", "52ffa720594cc48c1d0000cc"])
            let stored = try await gw.send(.GET, "/v1/tables/post/rows/52ffa720594cc48c1d0000aa")
            #expect(stored.json["updated_at"]?.int == 1_392_654_234_250)
            #expect(stored.json["values"]?["published_at"]?.int == 1_392_656_400_000)

            // Another client (a fresh install) gets them with times as ISO 8601.
            let fresh = try await sync(gw, #"{"last_synced": null, "entities": [{"name": "post", "scope": {"author_id": "5221258959"}}]}"#)
            let rows = fresh.json["entities"]?.array?.first?["created"]?.array ?? []
            #expect(rows.map { $0["id"] } == ["52ffa720594cc48c1d0000aa", "52ffa720594cc48c1d0000bb"])
            #expect(rows.first?["published_at"] == "2014-02-17T17:00:00.000Z")
            #expect(rows.first?["updated_at"] == "2014-02-17T16:23:54.250Z")
            // A JSON column's numbers come back digit for digit, beyond what a Double keeps too.
            #expect(rows.first?["meta"] == ["amount": .number("0.12345678901234567891"), "n": .number("18446744073709551615"), "tags": ["a"]])
            #expect(fresh.body.contains(#""n":18446744073709551615"#))
            #expect(fresh.body.contains(#""amount":0.12345678901234567891"#))
        }
    }

    @Test func aTimeColumnNoYearWritesIsAnsweredAsItsNumberAndTheGatewayServesOn() async throws {
        try await LiveGateway.run(Self.config()) { gw in
            // Any INTEGER fits an `_at` column; Int64.min once stopped the gateway at the read.
            for (id, millis) in [("early", Int64.min), ("late", 253_402_300_800_000)] {
                let put = try await gw.send(.PUT, "/v1/tables/post/rows/\(id)", body: #"{"values":{"published_at":\#(millis)}}"#)
                #expect(put.status == 200, "\(put.body)")
            }
            let reply = try await sync(gw, #"{"entities": [{"name": "post"}]}"#)
            #expect(reply.status == 200, "\(reply.body)")
            let rows = reply.json["entities"]?.array?.first?["created"]?.array ?? []
            #expect(rows.map { $0["published_at"]?.int } == [Int64.min, 253_402_300_800_000])
            #expect(try await gw.send(.GET, "/healthz").status == 200)
            // A writer time past year 9999 is refused here as on the row routes.
            let late = try await sync(
                gw, #"{"entities": [{"name": "post", "created": [{"id": "x", "updated_at": 253402300800000}]}]}"#)
            #expect(late.status == 400, "\(late.body)")
            #expect(late.json["error"]?["field"]?.string == "entities[0].created[0].updated_at")
        }
    }

    @Test func writesRideTheLocalWritePathWakingLongPollsAndFillingTheOutbox() async throws {
        try await LiveGateway.run(Self.config()) { gw in
            async let woken = gw.send(.GET, "/v1/tables/post/changes?since=0&wait=20")
            #expect(await eventually { gw.hub.waiting == 1 })
            let reply = try await sync(gw, #"{"entities": [{"name": "post", "created": [{"id": "p1", "body": "hi"}]}]}"#)
            #expect(reply.status == 200)
            #expect((try await woken).json["changes"]?.array?.first?["id"] == "p1")
            let stats = try await gw.stats()
            #expect(stats["tables"]?["post"]?["outbox_pending"]?.int == 1)
        }
    }

    @Test func malformedRequestsAreRefusedWithThePlaceNamedAndChangeNothing() async throws {
        try await LiveGateway.run(Self.config()) { gw in
            let cases: [(String, String, Int, String, String?)] = [
                (LiveGateway.clientToken, #"{"entities": [{"name": "post", "created": ["#, 400, "malformed_json", nil),
                (LiveGateway.clientToken,
                 #"{"entities": [{"name": "post", "created": [{"id": "a"}, {"id": "b"}, {"id": "c", "updated_at": "last tuesday"}]}]}"#,
                 400, "bad_request", "entities[0].created[2].updated_at"),
                (LiveGateway.clientToken, #"{"entities": [{"name": "post", "created": [{"id": "a"}]}, {"name": "comment"}]}"#,
                 404, "unknown_table", "entities[1].name"),
                (LiveGateway.readerToken, #"{"entities": [{"name": "post", "deleted": ["a"]}]}"#, 403, "forbidden", "entities[0].name"),
                (LiveGateway.readerToken, #"{"entities": [{"name": "notes"}]}"#, 403, "forbidden", "entities[0].name"),
                (LiveGateway.clientToken, #"{"entities": [{"name": "post", "created": [{"id": "a"}], "scope": {"owner": 1}}]}"#,
                 400, "bad_request", "entities[0].scope.owner"),
                (LiveGateway.clientToken, #"{"entities": [{"name": "post", "scope": {"meta": "x"}}]}"#,
                 400, "bad_request", "entities[0].scope.meta"),
                (LiveGateway.clientToken, #"{"last_synced": "2014-02-14", "entities": []}"#, 400, "bad_request", "last_synced"),
                (LiveGateway.clientToken,
                 #"{"entities": [{"name": "post", "deleted": [\#((0..<21).map { "\"d\($0)\"" }.joined(separator: ","))]}]}"#,
                 413, "too_many_rows", "entities"),
            ]
            for (token, body, status, code, field) in cases {
                let reply = try await sync(gw, body, token: token)
                #expect(reply.status == status, "\(body) → \(reply.body)")
                #expect(reply.errorCode == code, "\(body)")
                #expect(reply.json["error"]?["field"]?.string == field, "\(body)")
            }
            let rows = try await gw.send(.GET, "/v1/tables/post/rows?include_deleted=true")
            #expect(rows.json["rows"] == [])
            #expect(try await sync(gw, "{}", token: nil).status == 401)
            // A reader may sync what it may read, without sending rows.
            #expect(try await sync(gw, #"{"entities": [{"name": "post"}]}"#, token: LiveGateway.readerToken).status == 200)
        }
    }
}
