import DallyConfig
import DallyCore
import DallyTestSupport
import NIOHTTP1
import Testing

/// Valid requests of every writing route, their JSON mutated member by member
/// (``JSONMutations``: values swapped for extremes, members removed or added), sent over real
/// HTTP from a fixed seed. Whatever the gateway
/// makes of each, it answers: a success, or an error that is JSON with a stable code and a 4xx
/// status; never a 5xx, and it keeps serving. A time column holding Int64.min once stopped
/// the process at a TinySync read; found this way.
@Suite("End to end: mutated requests")
struct MutatedRequestsEndToEndTests {
    /// A route and a valid body for it.
    struct Seed {
        let method: HTTPMethod
        let path: String
        let body: JSONValue
    }

    /// `orders` with a column of every type, and `post` with a time column (`_at`: TinySync
    /// answers it in ISO 8601).
    static func config() throws -> GatewayConfig {
        let system = SystemConfig(
            tables: [
                .init("orders", columns: ["customer TEXT", "total REAL", "paid BOOLEAN", "items JSON", "qty INTEGER", "scan BLOB"]),
                .init("post", columns: ["body TEXT", "published_at INTEGER"]),
            ],
            gateways: [], clients: [.init(name: "app", token: LiveGateway.clientToken)],
            cloudAdminToken: "", gatewayAdminToken: LiveGateway.adminToken)
        return try system.gateway(
            "", dataDirectory: LiveGateway.temporaryDirectory(),
            extra: """
                [limits]
                max_body_bytes = 16384
                max_rows_per_batch = 50
                """)
    }

    static let seeds: [Seed] = [
        Seed(
            method: .PUT, path: "/v1/tables/post/rows/p1",
            body: .object([
                JSONMember(
                    "values", .object([JSONMember("body", .string("hi")), JSONMember("published_at", .int(1_700_000_000_000))]))
            ])),
        Seed(
            method: .PUT, path: "/v1/tables/orders/rows/o1",
            body: .object([
                JSONMember(
                    "values",
                    .object([
                        JSONMember("customer", .string("Ada")), JSONMember("total", .double(1.5)),
                        JSONMember("paid", .bool(true)), JSONMember("items", .array([.int(1), .object([])])),
                        JSONMember("qty", .int(2)), JSONMember("scan", .string("AAEC")),
                    ])),
                JSONMember("updated_at", .int(1_700_000_000_000)),
            ])),
        Seed(
            method: .PATCH, path: "/v1/tables/orders/rows/o1",
            body: .object([
                JSONMember("values", .object([JSONMember("paid", .bool(false))])), JSONMember("expected_seq", .int(1)),
            ])),
        Seed(
            method: .POST, path: "/v1/tables/orders/batch",
            body: .object([
                JSONMember(
                    "created",
                    .array([.object([JSONMember("id", .string("b1")), JSONMember("values", .object([JSONMember("qty", .int(2))]))])])),
                JSONMember("deleted", .array([.string("b2")])),
            ])),
        Seed(
            method: .POST, path: "/v1/tinysync",
            body: .object([
                JSONMember("last_synced", .string("2014-02-14T09:12:43-0700")),
                JSONMember(
                    "entities",
                    .array([
                        .object([
                            JSONMember("name", .string("orders")),
                            JSONMember("scope", .object([JSONMember("customer", .string("Ada"))])),
                            JSONMember(
                                "created",
                                .array([
                                    .object([
                                        JSONMember("id", .string("t1")), JSONMember("customer", .string("Ada")),
                                        JSONMember("updated_at", .string("2014-02-17T17:23:54-0700")),
                                    ])
                                ])),
                            JSONMember("deleted", .array([.string("t2")])),
                        ])
                    ])),
            ])),
        Seed(method: .POST, path: "/v1/conflicts/orders/o1", body: .object([JSONMember("resolution", .string("server"))])),
    ]

    @Test func everyMutationIsAnsweredAndTheGatewayServesOn() async throws {
        try await LiveGateway.run(Self.config()) { gw in
            var random = SplitMix64(seed: 20_261_130)
            for round in 0..<1_500 {
                let seed = Self.seeds[random.int(in: 0...(Self.seeds.count - 1))]
                let body = JSONMutations.mutated(seed.body, &random)
                let reply = try await gw.send(seed.method, seed.path, body: body.jsonText)
                #expect(reply.status < 500, "round \(round): \(seed.path) \(body.jsonText) → \(reply.status) \(reply.body)")
                if reply.status >= 400 {
                    #expect(reply.errorCode != nil, "round \(round): \(seed.path) \(body.jsonText) → \(reply.body)")
                }
                // Reads of whatever was saved, as another client would make them.
                if round % 50 == 0 {
                    let read = try await gw.send(.POST, "/v1/tinysync", body: #"{"entities":[{"name":"orders"},{"name":"post"}]}"#)
                    #expect(read.status == 200, "\(read.body)")
                    #expect(try await gw.send(.GET, "/v1/changes?since=0&limit=20").status == 200)
                }
            }
            #expect(try await gw.send(.GET, "/healthz").status == 200)
        }
    }
}
