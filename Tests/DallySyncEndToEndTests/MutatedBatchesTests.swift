import DallyCore
import DallyTestSupport
import Foundation
import NIOHTTP1
import Testing

/// A gateway's requests to the cloud, valid, then mutated member by member from a fixed seed
/// (``JSONMutations``): each is answered with a success or a JSON error with a stable code and
/// a 4xx status, never a 5xx, and the cloud goes on serving the gateways, whose sync still
/// works after. One cloud serves every site: no gateway's body may stop it.
@Suite struct MutatedBatchesTests {
    static let hash = String(repeating: "b", count: 64)

    static func batch(_ id: String) -> JSONValue {
        .object([
            JSONMember("batch", .string(id)), JSONMember("gateway", .string("gw-a")), JSONMember("replica", .string("r1")),
            JSONMember("since", .object([JSONMember("orders", .int(0)), JSONMember("docs", .int(0))])),
            JSONMember("resyncing", .array([])),
            JSONMember(
                "sections",
                .array([
                    .object([
                        JSONMember("table", .string("orders")),
                        JSONMember("columns", .array([.string("customer"), .string("total"), .string("paid"), .string("items")])),
                        JSONMember(
                            "rows",
                            .array([
                                .array([.string("o1"), .null, .int(1_795_241_160_000), .string("put"), .string("Ada"), .double(12.5), .bool(false), .array([])]),
                                .array([.string("o3"), .int(30), .int(1_795_241_166_000), .string("delete")]),
                            ])),
                    ]),
                    .object([
                        JSONMember("table", .string("docs")), JSONMember("columns", .array([.string("text"), .string("rev")])),
                        JSONMember("rows", .array([.array([.string("d1"), .null, .int(5), .string("put"), .string("x"), .int(7)])])),
                    ]),
                ])),
        ])
    }

    static let others: [(method: HTTPMethod, path: String, body: JSONValue)] = [
        (.POST, "/v1/chunks/missing", .object([JSONMember("chunks", .array([.string(hash)]))])),
        (
            .PUT, "/v1/objects/\(hash)",
            .object([
                JSONMember("hash", .string(hash)), JSONMember("size", .int(5)),
                JSONMember("chunks", .array([.array([.string(String(repeating: "c", count: 64)), .int(5)])])),
            ])
        ),
    ]

    @Test func everyMutatedRequestIsAnsweredAndTheCloudServesOn() async throws {
        try await SyncSystem.run { system in
            var random = SplitMix64(seed: 20_261_130)
            for round in 0..<1_200 {
                let (method, path, seed) =
                    random.chance(75)
                    ? (HTTPMethod.POST, "/v1/batches", Self.batch("mutated-\(round)"))
                    : Self.others[random.int(in: 0...(Self.others.count - 1))]
                let body = JSONMutations.mutated(seed, &random)
                let reply = try await system.cloudRequest(method, path, body: Array(body.jsonText.utf8))
                #expect(reply.status < 500, "round \(round): \(path) \(body.jsonText) → \(reply.status) \(reply.body)")
                if reply.status >= 400 {
                    #expect(reply.errorCode != nil, "round \(round): \(path) \(body.jsonText) → \(reply.body)")
                }
            }
            // The gateways sync as before.
            _ = try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/after", body: #"{"values":{"customer":"Ada"}}"#)
            #expect(try await system.sync("gw-a").status == 200)
            #expect(try await system.sync("gw-b").status == 200)
            #expect(try await system.gateway("gw-b", .GET, "/v1/tables/orders/rows/after").status == 200)
        }
    }
}
