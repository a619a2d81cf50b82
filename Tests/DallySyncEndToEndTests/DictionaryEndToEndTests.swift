import DallyCompression
import DallyCore
import Foundation
import Testing

/// Per-table dictionaries between a real gateway and a real cloud: trained from the gateway's
/// own batches, held by the cloud for that gateway only, used once acknowledged, and recovered
/// from when the cloud loses one.
@Suite struct DictionaryEndToEndTests {
    /// Writes `count` orders on gateway A and syncs them.
    static func writeAndSync(_ system: SyncSystem, round: Int, count: Int = 40) async throws {
        for k in 0..<count {
            let id = "o-\(round)-\(k)"
            let body = #"{"values":{"customer":"customer-\#(k % 7)","total":\#(10 + k % 13).5,"paid":\#(k % 2 == 0),"items":[{"sku":"S\#(k % 5)","qty":\#(k % 3 + 1)}]}}"#
            let reply = try await system.gateway("gw-a", .PUT, "/v1/tables/orders/rows/\(id)", body: body)
            #expect(reply.status == 200)
        }
        let sync = try await system.sync("gw-a")
        #expect(sync.status == 200, "\(sync.body)")
    }

    static func uploaded(_ system: SyncSystem) async throws -> Int64 {
        let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin)
        return stats.json["sync"]?["dictionaries_uploaded"]?.int ?? -1
    }

    static func cloudStats(_ system: SyncSystem) async throws -> JSONValue {
        try await system.cloudRequest(
            .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]
        ).json
    }

    @Test func aTrainedDictionaryIsUsedOnceAcknowledgedAndRecoveredWhenTheCloudLosesIt() async throws {
        try await SyncSystem.run { system in
            var round = 0
            while try await Self.uploaded(system) < 1 {
                #expect(round < 20, "no dictionary after \(round) rounds")
                if round >= 20 { return }
                try await Self.writeAndSync(system, round: round)
                round += 1
            }
            // The cloud holds it for gateway A only.
            let listed = try await system.cloudRequest(.GET, "/v1/dictionaries")
            let entries = listed.json["dictionaries"]?.array ?? []
            #expect(entries.count == 1)
            #expect(entries.first?["table"]?.string == "orders")
            let id = try #require(entries.first?["id"]?.int)
            #expect(try await system.cloudRequest(.GET, "/v1/dictionaries", as: "gw-b").json["dictionaries"]?.array?.isEmpty == true)
            #expect(try await system.cloudRequest(.GET, "/v1/dictionaries/\(id)", as: "gw-b").status == 404)
            let bytes = try await system.cloudRequest(.GET, "/v1/dictionaries/\(id)")
            #expect(bytes.status == 200)
            #expect(bytes.headers.first(name: "Content-Type") == "application/octet-stream")

            // The next batch is compressed with it, and what it carries arrives intact.
            let before = try await Self.cloudStats(system)["dictionaries"]?["bodies_decoded"]?.int ?? -1
            try await Self.writeAndSync(system, round: 100)
            #expect(try await Self.cloudStats(system)["dictionaries"]?["bodies_decoded"]?.int == before + 1)
            #expect(try await system.sync("gw-b").status == 200)
            let row = try await system.row("gw-b", table: "orders", "o-100-3")
            #expect(row?["values"]?["customer"]?.string == "customer-3")
            #expect(row?["values"]?["items"] == .array([.object([.init("sku", .string("S3")), .init("qty", .int(1))])]))

            // The cloud loses it: the batch goes again without it, and it is offered again.
            #expect(try await system.cloudRequest(.DELETE, "/v1/dictionaries/\(id)").status == 204)
            try await Self.writeAndSync(system, round: 101)
            #expect(try await Self.uploaded(system) == 2)
            let again = try await system.cloudRequest(.GET, "/v1/dictionaries")
            #expect(again.json["dictionaries"]?.array?.first?["id"]?.int == id)
            #expect(try await system.sync("gw-b").status == 200)
            #expect(try await system.row("gw-b", table: "orders", "o-101-39")?["values"]?["customer"]?.string == "customer-4")
        }
    }

    /// A dictionary trained here, for the route tests.
    static func dictionary(id: UInt32, customers: String = "c") throws -> ZstdDictionary {
        let samples = (0..<200).map { n in
            Array(#"{"table":"orders","columns":["customer","total"],"rows":[["o-\#(n)",null,\#(1_800_000_000_000 + n),"put","\#(customers)-\#(n % 9)",\#(n % 17).5]]}"#.utf8)
        }
        return try ZstdDictionary.train(samples: samples, capacity: 1_024, id: id, level: 6)
    }

    @Test func dictionaryRoutesRefuseBadInputAndChangeNothing() async throws {
        try await SyncSystem.run { system in
            let good = try Self.dictionary(id: 50_000)
            let other = try Self.dictionary(id: 50_001, customers: "someone else")
            func put(_ path: String, _ bytes: [UInt8], as gateway: String = "gw-a") async throws -> SyncSystem.Reply {
                try await system.cloudRequest(.PUT, path, as: gateway, body: bytes)
            }
            // Not a dictionary; an id that does not match the bytes; a reserved id; no table.
            #expect(try await put("/v1/dictionaries/50000?table=orders", Array("hello".utf8)).errorCode == "bad_dictionary")
            #expect(try await put("/v1/dictionaries/50002?table=orders", good.bytes).errorCode == "bad_dictionary")
            #expect(try await put("/v1/dictionaries/7?table=orders", good.bytes).errorCode == "bad_request")
            #expect(try await put("/v1/dictionaries/50000", good.bytes).errorCode == "bad_query")
            #expect(try await put("/v1/dictionaries/50000?table=nosuch", good.bytes).errorCode == "unknown_table")
            #expect(try await put("/v1/dictionaries/50000?table=orders", good.bytes, as: "nobody").status == 401)
            #expect(try await system.cloudRequest(.GET, "/v1/dictionaries").json["dictionaries"]?.array?.isEmpty == true)
            // A query parameter a cloud route does not take is refused, not ignored.
            #expect(try await system.cloudRequest(.GET, "/v1/dictionaries?table=orders").errorCode == "bad_query")
            #expect(try await system.cloudRequest(.POST, "/v1/batches?dry_run=1", body: Array("{}".utf8)).errorCode == "bad_query")

            // Stored; stored again (a retried upload); another gateway may use the same id.
            #expect(try await put("/v1/dictionaries/50000?table=orders", good.bytes).status == 201)
            #expect(try await put("/v1/dictionaries/50000?table=orders", good.bytes).status == 200)
            #expect(try await put("/v1/dictionaries/50000?table=orders", good.bytes, as: "gw-b").status == 201)
            // An id holds one set of bytes for good.
            var forged = other.bytes
            forged.replaceSubrange(4..<8, with: good.bytes[4..<8])  // the id field, little-endian
            let conflict = try await put("/v1/dictionaries/50000?table=orders", forged)
            #expect(conflict.status == 409, "\(conflict.body)")
            #expect(conflict.errorCode == "dictionary_conflict")

            // A body naming a dictionary the cloud lacks is refused whole, before anything applies.
            let batch = Array(#"{"batch":"b-dict-1","gateway":"gw-a","replica":"r-1","sections":[{"table":"orders","columns":["customer"],"rows":[["x",null,1,"put","Ada"]]}]}"#.utf8)
            let unknown = try Self.dictionary(id: 60_000)
            let body = try FramedZstd.compress(segments: [.init(batch, dictionary: unknown)], level: 3)
            let refused = try await system.cloudRequest(
                .POST, "/v1/batches", headers: [("Content-Encoding", "zstd")], body: body)
            #expect(refused.status == 409)
            #expect(refused.errorCode == "unknown_dictionary")
            #expect(try await Self.cloudStats(system)["tables"]?["orders"]?["version"]?.int == 0)
            // With the one it holds, the same batch applies.
            let known = try FramedZstd.compress(segments: [.init(batch, dictionary: good)], level: 3)
            let applied = try await system.cloudRequest(
                .POST, "/v1/batches", headers: [("Content-Encoding", "zstd")], body: known)
            #expect(applied.status == 200, "\(applied.body)")
            #expect(try await Self.cloudStats(system)["tables"]?["orders"]?["version"]?.int == 1)

            #expect(try await system.cloudRequest(.DELETE, "/v1/dictionaries/50000").status == 204)
            #expect(try await system.cloudRequest(.DELETE, "/v1/dictionaries/50000").status == 404)
            #expect(try await system.cloudRequest(.GET, "/v1/dictionaries/50000").status == 404)
        }
    }
}
