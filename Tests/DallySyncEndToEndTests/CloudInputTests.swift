import DallyCompression
import DallyCore
import DallySync
import Testing

/// What the cloud does with bad, hostile or repeated input: a clear error, nothing changed.
@Suite struct CloudInputTests {
    static func batch(
        id: String = "b1", gateway: String = "gw-a", replica: String = "r-test", table: String = "orders", rows: [String]
    ) -> [UInt8] {
        Array(
            #"{"batch":"\#(id)","gateway":"\#(gateway)","replica":"\#(replica)","since":{},"sections":[{"table":"\#(table)","columns":["customer","total"],"rows":[\#(rows.joined(separator: ","))]}]}"#
                .utf8)
    }

    func ordersVersion(_ system: SyncSystem) async throws -> Int64? {
        let stats = try await system.cloudRequest(
            .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")])
        return stats.json["tables"]?["orders"]?["version"]?.int
    }

    @Test func theSameBatchTwiceIsAppliedOnce() async throws {
        try await SyncSystem.run { system in
            let body = try Compressor.compress(
                Self.batch(rows: [#"["o1",null,1000,"put","Ada",1.5]"#, #"["o2",null,1000,"put","Bo",2]"#]),
                coding: .zstd, level: 3)
            let first = try await system.cloudRequest(.POST, "/v1/batches", headers: [("Content-Encoding", "zstd")], body: body)
            #expect(first.status == 200)
            #expect(first.json["replayed"]?.bool == false)
            let second = try await system.cloudRequest(.POST, "/v1/batches", headers: [("Content-Encoding", "zstd")], body: body)
            #expect(second.status == 200)
            #expect(second.json["replayed"]?.bool == true)
            #expect(second.json["results"] == first.json["results"])
            #expect(try await ordersVersion(system) == 2)

            // The same id with other content is refused, not applied.
            let other = try await system.cloudRequest(
                .POST, "/v1/batches", body: Self.batch(rows: [#"["o3",null,1000,"put","Cy",3]"#]))
            #expect(other.status == 409)
            #expect(other.errorCode == "batch_reused")
            // Batch ids are per gateway: B may use the same id.
            let fromB = try await system.cloudRequest(
                .POST, "/v1/batches", as: "gw-b", body: Self.batch(gateway: "gw-b", rows: [#"["o3",null,1000,"put","Cy",3]"#]))
            #expect(fromB.status == 200)
            #expect(try await ordersVersion(system) == 3)
        }
    }

    @Test func credentialsAreChecked() async throws {
        try await SyncSystem.run { system in
            let body = Self.batch(rows: [#"["o1",null,1000,"put","Ada",1.5]"#])
            let wrongSecret = try await system.cloudRequest(.POST, "/v1/batches", secret: "not-the-secret-at-all", body: body)
            #expect(wrongSecret.status == 401)
            #expect(wrongSecret.errorCode == "unauthorized")
            let unknown = try await system.cloudRequest(.POST, "/v1/batches", as: "gw-zz", secret: "whatever-secret-123", body: body)
            #expect(unknown.status == 401)
            let none = try await system.cloudRequest(.GET, "/v1/notify?versions=orders:0", as: nil)
            #expect(none.status == 401)
            // Credentials of one gateway cannot send a batch in another's name.
            let impostor = try await system.cloudRequest(.POST, "/v1/batches", as: "gw-b", body: body)
            #expect(impostor.status == 403)
            #expect(try await ordersVersion(system) == 0)
        }
    }

    @Test func oversizeBodiesAndBombsAreStopped() async throws {
        try await SyncSystem.run { system in
            // Over max_body_bytes (64 KiB) as sent.
            let large = Self.batch(rows: (0..<2000).map { #"["o\#($0)",null,1000,"put","\#(String(repeating: "x", count: 20))",1]"# })
            let oversize = try await system.cloudRequest(.POST, "/v1/batches", body: large)
            #expect(oversize.status == 413)
            #expect(oversize.errorCode == "body_too_large")

            // Small when sent, 64 MiB of zeros once decompressed (limit 256 KiB).
            let zeros = [UInt8](repeating: 0, count: 64 << 20)
            for coding in [ContentCoding.zstd, .deflate] {
                let bomb = try Compressor.compress(zeros, coding: coding, level: coding == .zstd ? 19 : 9)
                #expect(bomb.count < 65536)
                let reply = try await system.cloudRequest(
                    .POST, "/v1/batches", headers: [("Content-Encoding", coding.rawValue)], body: bomb)
                #expect(reply.status == 413, "\(coding)")
                #expect(reply.errorCode == "body_too_large")
            }
            let unknownCoding = try await system.cloudRequest(
                .POST, "/v1/batches", headers: [("Content-Encoding", "br")], body: Self.batch(rows: []))
            #expect(unknownCoding.status == 415)
            #expect(unknownCoding.errorCode == "unsupported_encoding")
            let garbage = try await system.cloudRequest(
                .POST, "/v1/batches", headers: [("Content-Encoding", "zstd")], body: Array("not zstd".utf8))
            #expect(garbage.status == 400)
            #expect(garbage.errorCode == "bad_encoding")
            #expect(try await ordersVersion(system) == 0)
        }
    }

    /// A cloud route asked with a method it does not take: `405` and `Allow`, nothing applied.
    @Test func aMethodTheRouteDoesNotTakeIsRefused() async throws {
        try await SyncSystem.run { system in
            let reply = try await system.cloudRequest(.PUT, "/v1/batches", body: Self.batch(rows: []))
            #expect(reply.status == 405)
            #expect(reply.errorCode == "method_not_allowed")
            #expect(reply.headers["Allow"].first == "POST")
            #expect(try await system.cloudRequest(.DELETE, "/v1/nothing-here").status == 404)
            #expect(try await ordersVersion(system) == 0)
        }
    }

    @Test func malformedBatchesAreRefusedWithTheReason() async throws {
        try await SyncSystem.run { system in
            let notJSON = try await system.cloudRequest(.POST, "/v1/batches", body: Array("{\"batch\":".utf8))
            #expect(notJSON.status == 400)
            #expect(notJSON.errorCode == "malformed_json")
            let noSections = try await system.cloudRequest(
                .POST, "/v1/batches", body: Array(#"{"batch":"b1","gateway":"gw-a","replica":"r"}"#.utf8))
            #expect(noSections.status == 400)
            #expect(noSections.json["error"]?["message"]?.string?.contains("sections") == true)
            let shortRow = try await system.cloudRequest(
                .POST, "/v1/batches", body: Self.batch(rows: [#"["o1",null,1000,"put","only one value"]"#]))
            #expect(shortRow.status == 400)
            #expect(shortRow.json["error"]?["field"]?.string == "sections[0].rows[0]")
            #expect(try await ordersVersion(system) == 0)
        }
    }

    @Test func aBadRowFailsAloneNeverTheBatch() async throws {
        try await SyncSystem.run { system in
            let body = Array(
                #"""
                {"batch":"b9","gateway":"gw-a","replica":"r-test","since":{},"sections":[
                 {"table":"nosuch","columns":["x"],"rows":[["a",null,1,"put",1]]},
                 {"table":"orders","columns":["customer","total"],"rows":[["ok1",null,1,"put","Ada",1.5],["bad",null,1,"put","Bo","not a number"]]},
                 {"table":"notes","columns":["body","colour"],"rows":[["n1",null,1,"put","x","red"]]}]}
                """#.utf8)
            let reply = try await system.cloudRequest(.POST, "/v1/batches", body: body)
            #expect(reply.status == 200)
            let results = reply.json["results"]?.array ?? []
            #expect(results.count == 3)
            #expect(results[0]["rows"]?.array?.first?.array?[2]["code"]?.string == "unknown_table")
            let orders = results[1]["rows"]?.array ?? []
            // The accepted row is a run of one at version 1.
            #expect(orders.first?.array == [.int(1), .int(1)])
            #expect(orders.last?.array?[2]["code"]?.string == "wrong_type")
            #expect(orders.last?.array?[2]["field"]?.string == "total")
            #expect(results[2]["rows"]?.array?.first?.array?[2]["code"]?.string == "unknown_column")
            #expect(try await ordersVersion(system) == 1)
        }
    }
}
