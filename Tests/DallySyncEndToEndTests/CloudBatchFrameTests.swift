import DallyCompression
import DallyCore
import DallyObjects
import Testing

/// Batch bodies in resumable frames over real HTTP (PROTOCOL.md §6.1): kept as they arrive,
/// applied once whole, answered as an unframed batch; bad frames refused with nothing applied.
@Suite struct CloudBatchFrameTests {
    typealias Cloud = CloudObjectTests.ObjectCloud

    /// A zstd batch body of `files` rows, as a gateway sends it.
    static func body(_ id: String, rows: Int) throws -> [UInt8] {
        let encoded = (0..<rows).map { i in
            JSONValue.array([.string("f\(i)"), .null, .int(1_000), .string("put"), .string("file \(i) " + String(repeating: "x", count: i % 50)), .null]).jsonText
        }
        let json = #"{"batch":"\#(id)","gateway":"gw-a","replica":"r-1","sections":[{"table":"files","columns":["name","content"],"rows":[\#(encoded.joined(separator: ","))]}]}"#
        return try Compressor.compress(Array(json.utf8), coding: .zstd, level: 3)
    }

    static func frame(_ cloud: Cloud, _ body: [UInt8], from: Int, to: Int, hash: ContentHash? = nil) async throws -> Cloud.Reply {
        try await cloud.request(
            .POST, "/v1/batches",
            headers: [
                ("Dally-Upload-Hash", (hash ?? ContentHash.of(body)).hex), ("Dally-Upload-Length", "\(body.count)"),
                ("Dally-Upload-Offset", "\(from)"), ("Dally-Upload-Encoding", "zstd"),
            ],
            body: Array(body[from..<to]))
    }

    @Test func aBodyInFramesIsKeptAsItArrivesAndAppliedOnceWhole() async throws {
        try await Cloud.run { cloud in
            let body = try Self.body("b-framed", rows: 300)
            let half = body.count / 2
            // An empty frame asks where the copy ends: nothing held yet.
            let asked = try await Self.frame(cloud, body, from: 0, to: 0)
            #expect(asked.status == 202, "\(asked.json)")
            #expect(asked.json["offset"] == .int(0))
            let first = try await Self.frame(cloud, body, from: 0, to: half)
            #expect(first.status == 202)
            #expect(first.json == .object([JSONMember("offset", .int(Int64(half))), JSONMember("length", .int(Int64(body.count)))]))
            #expect(try await Self.frame(cloud, body, from: 0, to: 0).json["offset"] == .int(Int64(half)))
            // A frame that does not continue the copy is told where it ends; nothing changes.
            let skipped = try await Self.frame(cloud, body, from: half + 10, to: body.count)
            #expect(skipped.status == 409)
            #expect(skipped.errorCode == "upload_offset")
            #expect(skipped.json["offset"] == .int(Int64(half)))
            // Nothing is applied before the body is whole.
            #expect(try await cloud.request(.GET, "/v1/batches/b-framed").status == 404)

            let last = try await Self.frame(cloud, body, from: half, to: body.count)
            #expect(last.status == 200, "\(last.json)")
            #expect(last.json["batch"]?.string == "b-framed")
            #expect(last.json["replayed"] == .bool(false))
            // The same batch unframed is the same batch: answered from the stored results.
            let again = try await cloud.request(
                .POST, "/v1/batches", headers: [("Content-Encoding", "zstd")], body: body)
            #expect(again.status == 200)
            #expect(again.json["replayed"] == .bool(true))
            #expect(again.json["results"] == last.json["results"])
        }
    }

    @Test func badFramesAreRefusedAndApplyNothing() async throws {
        try await Cloud.run { cloud in
            let body = try Self.body("b-bad", rows: 50)
            let noHash = try await cloud.request(
                .POST, "/v1/batches", headers: [("Dally-Upload-Length", "\(body.count)")], body: body)
            #expect(noHash.status == 400)
            #expect(noHash.json["error"]?["field"]?.string == "Dally-Upload-Hash")
            let notHex = try await cloud.request(
                .POST, "/v1/batches",
                headers: [("Dally-Upload-Length", "\(body.count)"), ("Dally-Upload-Hash", "xyz")], body: body)
            #expect(notHex.status == 400)
            // A frame's place without the body's length: refused, not taken whole from byte 0.
            for header in ["Dally-Upload-Offset", "Dally-Upload-Hash", "Dally-Upload-Encoding"] {
                let lengthless = try await cloud.request(.POST, "/v1/batches", headers: [(header, "0")], body: body)
                #expect(lengthless.status == 400, "\(header)")
                #expect(lengthless.json["error"]?["field"]?.string == header)
            }
            // Over limits.max_body_bytes (64 KiB here): 413, as an unframed body would be.
            let tooLong = try await cloud.request(
                .POST, "/v1/batches",
                headers: [("Dally-Upload-Length", "70000"), ("Dally-Upload-Hash", ContentHash.of(body).hex)], body: body)
            #expect(tooLong.status == 413)
            #expect(tooLong.errorCode == "body_too_large")
            // A whole body whose hash is not the one named: 422, the copy dropped.
            let wrong = try await Self.frame(cloud, body, from: 0, to: body.count, hash: ContentHash.of([1, 2, 3]))
            #expect(wrong.status == 422)
            #expect(wrong.errorCode == "hash_mismatch")
            #expect(try await Self.frame(cloud, body, from: 0, to: 0, hash: ContentHash.of([1, 2, 3])).json["offset"] == .int(0))
            #expect(try await cloud.request(.GET, "/v1/batches/b-bad").status == 404)
            #expect(try await cloud.request(.GET, "/v1/batches/b%00").status == 400)
            // The cloud still serves: the right frame is applied.
            #expect(try await Self.frame(cloud, body, from: 0, to: body.count).status == 200)
        }
    }
}
