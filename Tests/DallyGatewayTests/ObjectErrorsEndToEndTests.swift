import DallyConfig
import DallyCore
import DallyObjects
import Foundation
import NIOHTTP1
import Testing

/// Every way the object routes refuse a request, through real HTTP; and that a refused
/// request changes nothing and the gateway goes on serving.
@Suite("End to end: object errors")
struct ObjectErrorsEndToEndTests {
    static let path = "/v1/tables/photos/rows/p1/objects/image"
    static let zeros = String(repeating: "0", count: 64)

    struct Case: Sendable, CustomStringConvertible {
        let method: String
        let path: String
        var token: String? = LiveGateway.clientToken
        var bytes: [UInt8]? = Array("some bytes".utf8)
        var headers: [(String, String)] = []
        let status: Int
        let code: String
        var description: String { "\(method) \(path) \(headers) → \(status) \(code)" }
    }

    static let cases: [Case] = [
        Case(method: "PUT", path: path, token: nil, status: 401, code: "unauthorized"),
        Case(method: "GET", path: path, token: nil, bytes: nil, status: 401, code: "unauthorized"),
        Case(method: "POST", path: "/v1/objects", token: nil, status: 401, code: "unauthorized"),
        Case(method: "PUT", path: path, token: LiveGateway.readerToken, status: 403, code: "forbidden"),
        Case(method: "GET", path: path, token: LiveGateway.readerToken, bytes: nil, status: 403, code: "forbidden"),
        Case(method: "POST", path: "/v1/objects", token: LiveGateway.readerToken, status: 403, code: "forbidden"),
        Case(method: "POST", path: "/v1/objects", token: LiveGateway.adminToken, status: 403, code: "forbidden"),
        Case(method: "PUT", path: "/v1/tables/nope/rows/p1/objects/image", status: 404, code: "unknown_table"),
        Case(method: "PUT", path: "/v1/tables/photos/rows/p1/objects/title", status: 422, code: "object_column"),
        Case(method: "GET", path: "/v1/tables/photos/rows/p1/objects/title", bytes: nil, status: 422, code: "object_column"),
        Case(method: "PUT", path: "/v1/tables/photos/rows/p1/objects/colour", status: 422, code: "unknown_column"),
        Case(method: "PUT", path: "/v1/tables/notes/rows/n1/objects/body", status: 422, code: "object_column"),
        // Nothing from the path names a file.
        Case(method: "PUT", path: "/v1/tables/photos/rows/%2e%2e/objects/image", status: 400, code: "invalid_id"),
        Case(method: "PUT", path: "/v1/tables/photos/rows/..%2Fx/objects/image", status: 400, code: "invalid_id"),
        Case(method: "GET", path: "/v1/tables/photos/rows/%2e%2e/objects/image", bytes: nil, status: 400, code: "invalid_id"),
        Case(method: "PUT", path: "/v1/tables/photos/rows/p1/objects/%2e%2e", status: 422, code: "unknown_column"),
        Case(method: "PUT", path: "/v1/tables/photos/rows/p1/objects/..%2Fchunks.sqlite", status: 422, code: "unknown_column"),
        Case(method: "PUT", path: path + "?expected_seq=x", status: 400, code: "bad_query"),
        Case(method: "PUT", path: path + "?since=1", status: 400, code: "bad_query"),
        Case(method: "PUT", path: path + "?expected_seq=3", status: 409, code: "version_mismatch"),
        Case(method: "PUT", path: path, headers: [("Dally-Object-Sha256", zeros)], status: 422, code: "hash_mismatch"),
        Case(
            method: "PUT", path: path, headers: [("Repr-Digest", "sha-256=:\(Data(repeating: 0, count: 32).base64EncodedString()):")],
            status: 422, code: "hash_mismatch"),
        Case(method: "POST", path: "/v1/objects", headers: [("Dally-Object-Sha256", zeros)], status: 422, code: "hash_mismatch"),
        Case(method: "PUT", path: path, headers: [("Dally-Object-Sha256", "abc")], status: 400, code: "bad_request"),
        Case(method: "PUT", path: path, headers: [("Repr-Digest", "sha-256=:nope:")], status: 400, code: "bad_request"),
        Case(method: "PUT", path: path, headers: [("Content-Encoding", "gzip")], status: 415, code: "unsupported_encoding"),
        Case(method: "PUT", path: path, bytes: Array(repeating: 7, count: 70_000), status: 413, code: "object_too_large"),
        Case(method: "POST", path: "/v1/objects", bytes: Array(repeating: 7, count: 70_000), status: 413, code: "object_too_large"),
        Case(method: "GET", path: path, bytes: nil, status: 404, code: "not_found"),
        Case(
            method: "PUT", path: "/v1/tables/photos/rows/p1",
            bytes: Array(#"{"values":{"image":{"hash":"\#(zeros)"}}}"#.utf8), status: 422, code: "unknown_object"),
        Case(
            method: "PUT", path: "/v1/tables/photos/rows/p1", bytes: Array(#"{"values":{"image":"a photo"}}"#.utf8),
            status: 422, code: "wrong_type"),
    ]

    /// A small limit (64 KiB) so that "too large" is cheap to send.
    static func config() throws -> GatewayConfig { try ObjectGateway.config(maxBytes: 64 << 10) }

    @Test(arguments: cases)
    func refusedWithTheRightStatusAndCodeAndNothingChanges(_ c: Case) async throws {
        try await ObjectGateway.run(Self.config()) { gw in
            let reply = try await gw.send(.init(rawValue: c.method), c.path, token: c.token, bytes: c.bytes, headers: c.headers)
            #expect(reply.status == c.status, "\(String(decoding: reply.bytes, as: UTF8.self))")
            #expect(reply.errorCode == c.code, "\(String(decoding: reply.bytes, as: UTF8.self))")
            #expect(reply.header("Content-Type") == "application/json")
            let stats = try await gw.stats()
            #expect(stats["store"]?["last_seq"]?.int == 0)
            #expect(stats["objects"]?["objects"]?.int == 0)
            // The process keeps serving.
            #expect(try await gw.send(.PUT, "/v1/tables/photos/rows/after/objects/image", bytes: [1]).status == 201)
        }
    }

    @Test func anUploadPastTheLimitIsRefusedMidStreamAndTheRowIsUnchanged() async throws {
        try await ObjectGateway.run(Self.config()) { gw in
            _ = try await gw.live.send(.PUT, "/v1/tables/photos/rows/p1", body: #"{"values":{"title":"cat"}}"#)
            for announce in [true, false] {
                let reply = try await gw.stream(.PUT, Self.path, seed: 1, length: 1 << 20, announce: announce)
                #expect(reply.status == 413)
                #expect(reply.errorCode == "object_too_large")
            }
            // Exactly the limit is accepted.
            let atLimit = try await gw.stream(.PUT, "/v1/tables/photos/rows/p2/objects/image", seed: 1, length: 64 << 10, announce: false)
            #expect(atLimit.status == 201)
            let row = try await gw.live.send(.GET, "/v1/tables/photos/rows/p1")
            #expect(row.json["seq"]?.int == 1)
            #expect(row.json["values"]?["image"] == .null)
            #expect(try await gw.stats()["objects"]?["objects"]?.int == 1)
        }
    }

    @Test func anUploadUnderTheFreeSpaceFloorIsRefusedBeforeAnyChunkIsStored() async throws {
        var config = try Self.config()
        config.store.minFreeBytes = 1 << 50  // more than any filesystem here has free
        try await ObjectGateway.run(config) { gw in
            for (method, path) in [(HTTPMethod.PUT, Self.path), (.POST, "/v1/objects")] {
                let reply = try await gw.stream(method, path, seed: 3, length: 48 << 10, announce: true)
                #expect(reply.status == 507, "\(String(decoding: reply.bytes, as: UTF8.self))")
                #expect(reply.errorCode == "insufficient_storage")
            }
            // Refused uploads once left their chunks behind, filling the disk they were refused for.
            #expect(try await gw.stats()["objects"]?["chunks"]?.int == 0)
            #expect(try await gw.stats()["objects"]?["objects"]?.int == 0)
        }
    }

    @Test func aMatchingDigestHeaderIsAccepted() async throws {
        let bytes = Array("checked bytes".utf8)
        let hash = ContentHash.of(bytes)
        try await ObjectGateway.run(Self.config()) { gw in
            let hex = try await gw.send(.PUT, Self.path, bytes: bytes, headers: [("Dally-Object-Sha256", hash.hex.uppercased())])
            #expect(hex.status == 201)
            let repr = try await gw.send(
                .POST, "/v1/objects", bytes: bytes,
                headers: [("Repr-Digest", "sha-512=:AAAA:, sha-256=:\(Data(hash.bytes).base64EncodedString()):")])
            #expect(repr.status == 201)
            #expect(repr.json["hash"]?.string == hash.hex)
        }
    }

    @Test func aStaleExpectedSeqIsAnsweredWithTheCurrentRowAndRecordsNothing() async throws {
        try await ObjectGateway.run(Self.config()) { gw in
            _ = try await gw.live.send(.PUT, "/v1/tables/photos/rows/p1", body: #"{"values":{"title":"cat"}}"#)
            let stale = try await gw.send(.PUT, Self.path + "?expected_seq=7", bytes: [1, 2, 3])
            #expect(stale.status == 409)
            #expect(stale.json["current"]?["values"]?["title"] == "cat")
            let createOnly = try await gw.send(.PUT, Self.path, bytes: [1, 2, 3], headers: [("If-None-Match", "*")])
            #expect(createOnly.status == 409)
            #expect(try await gw.stats()["objects"]?["objects"]?.int == 0)
            let fresh = try await gw.send(.PUT, Self.path + "?expected_seq=1", bytes: [1, 2, 3])
            #expect(fresh.status == 200)
        }
    }

    @Test func aRowWithoutAnObjectIs404() async throws {
        try await ObjectGateway.run(Self.config()) { gw in
            _ = try await gw.live.send(.PUT, "/v1/tables/photos/rows/p1", body: #"{"values":{"title":"cat"}}"#)
            let reply = try await gw.send(.GET, Self.path)
            #expect(reply.status == 404)
            #expect(reply.errorCode == "not_found")
            _ = try await gw.send(.PUT, Self.path, bytes: [1])
            _ = try await gw.live.send(.DELETE, "/v1/tables/photos/rows/p1")
            #expect(try await gw.send(.GET, Self.path).status == 404)
            #expect(try await gw.store.objectRefs(table: "photos", id: "p1").isEmpty)
        }
    }
}
