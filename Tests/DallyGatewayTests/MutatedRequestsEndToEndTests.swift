import DallyConfig
import DallyCore
import DallyTestSupport
import NIOHTTP1
import Testing

/// Valid requests of every writing route, their JSON mutated member by member (values swapped
/// for extremes: Int64's ends, numbers past them, NUL and unpaired text, times past year 9999,
/// deep and empty containers), sent over real HTTP from a fixed seed. Whatever the gateway
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

    /// What a mutation puts in place of a value.
    static let extremes: [JSONValue] = [
        .null, .bool(false), .int(0), .int(-1), .int(.max), .int(.min), .double(9.3e18), .double(-9.3e18),
        .double(1e308), .double(5e-324), .string(""), .string("\u{0}"), .string(String(repeating: "x", count: 3_000)),
        .string("9999-12-31T23:59:59.999Z"), .string("10000-01-01T00:00:00Z"), .int(253_402_300_800_000), .array([]),
        .object([]), .array([.array([.array([])])]), .string("orders"), .string("delete"),
    ]

    @Test func everyMutationIsAnsweredAndTheGatewayServesOn() async throws {
        try await LiveGateway.run(Self.config()) { gw in
            var random = SplitMix64(seed: 20_261_130)
            for round in 0..<1_500 {
                let seed = Self.seeds[random.int(in: 0...(Self.seeds.count - 1))]
                var body = seed.body
                for _ in 0..<random.int(in: 1...3) { body = Self.mutate(body, &random) }
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

    /// `value` with one of its leaves (or members, or elements) replaced, removed or added.
    static func mutate(_ value: JSONValue, _ random: inout SplitMix64) -> JSONValue {
        switch value {
        case .object(var members) where !members.isEmpty:
            let i = random.int(in: 0...(members.count - 1))
            switch random.int(in: 0...9) {
            case 0: members.remove(at: i)
            case 1: members.append(JSONMember("extra", extreme(&random)))
            default: members[i].value = mutate(members[i].value, &random)
            }
            return .object(members)
        case .array(var elements) where !elements.isEmpty:
            let i = random.int(in: 0...(elements.count - 1))
            switch random.int(in: 0...9) {
            case 0: elements.remove(at: i)
            case 1: elements.append(extreme(&random))
            default: elements[i] = mutate(elements[i], &random)
            }
            return .array(elements)
        default:
            return extreme(&random)
        }
    }

    static func extreme(_ random: inout SplitMix64) -> JSONValue {
        extremes[random.int(in: 0...(extremes.count - 1))]
    }
}
