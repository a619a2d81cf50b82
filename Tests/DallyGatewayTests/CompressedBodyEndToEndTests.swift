import DallyCompression
import DallyCore
import Testing

/// Local JSON bodies sent compressed, through real HTTP: `zstd` and `deflate` are read as their
/// `Content-Encoding` says, within `limits.max_body_bytes` once decompressed; another coding is
/// refused by name instead of read as JSON (the error tests hold the refusals).
@Suite("End to end: compressed JSON bodies")
struct CompressedBodyEndToEndTests {
    static func compressed(_ text: String, _ coding: ContentCoding) throws -> [UInt8] {
        try Compressor.compress(Array(text.utf8), coding: coding, level: Compressor.defaultLevel(for: coding))
    }

    @Test func zstdAndDeflateBodiesAreReadAsTheySay() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let put = try await gw.send(
                .PUT, "/v1/tables/orders/rows/o1",
                bytes: try Self.compressed(#"{"values":{"customer":"Ada","qty":2}}"#, .zstd),
                headers: [("Content-Encoding", "zstd")])
            #expect(put.status == 200, "\(put.body)")
            #expect(put.json["values"]?["customer"]?.string == "Ada")

            let batch = try await gw.send(
                .POST, "/v1/tables/orders/batch",
                bytes: try Self.compressed(#"{"created":[{"id":"o2","values":{"qty":3}}]}"#, .deflate),
                headers: [("Content-Encoding", "deflate")])
            #expect(batch.status == 200, "\(batch.body)")
            #expect(try await gw.send(.GET, "/v1/tables/orders/rows/o2").json["values"]?["qty"]?.int == 3)

            // Said to be identity: read as it is.
            let plain = try await gw.send(
                .PATCH, "/v1/tables/orders/rows/o1", body: #"{"values":{"qty":5}}"#,
                headers: [("Content-Encoding", "identity")])
            #expect(plain.status == 200, "\(plain.body)")
        }
    }

    @Test func aSmallBodyThatDecompressesPastTheLimitIsRefusedAndNothingIsSaved() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            // 3,000 characters of one letter: a few dozen bytes sent, over the 2,048 allowed once read.
            let text = #"{"values":{"customer":"\#(String(repeating: "x", count: 3_000))"}}"#
            let bomb = try Self.compressed(text, .zstd)
            #expect(bomb.count < 2_048)
            let reply = try await gw.send(
                .PUT, "/v1/tables/orders/rows/o1", bytes: bomb, headers: [("Content-Encoding", "zstd")])
            #expect(reply.status == 413, "\(reply.body)")
            #expect(reply.errorCode == "body_too_large")
            #expect(try await gw.stats()["store"]?["last_seq"]?.int == 0)
        }
    }
}
