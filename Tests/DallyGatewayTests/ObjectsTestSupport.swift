import DallySyncEngine
import DallyTestSupport
import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallyGateway
import DallyObjects
import DallyStore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// A live gateway with tables that have OBJECT columns, and what object tests look at besides
/// HTTP: the replica and the gateway's object parts.
struct ObjectGateway: Sendable {
    let live: LiveGateway
    let store: ReplicaStore
    let objects: GatewayObjects

    /// `photos` (title, image OBJECT, thumb OBJECT), `notes`, the test tokens; `reader` may
    /// read only `notes` and write nothing.
    static func config(maxBytes: Int64 = 256 << 20, dataDirectory: String = LiveGateway.temporaryDirectory()) throws
        -> GatewayConfig
    {
        let system = SystemConfig(
            tables: [
                .init("photos", columns: ["title TEXT", "image OBJECT", "thumb OBJECT"]),
                .init("notes", columns: ["body TEXT"]),
            ],
            gateways: [],
            clients: [
                .init(name: "app", token: LiveGateway.clientToken),
                .init(name: "reader", token: LiveGateway.readerToken, read: ["notes"], write: nil),
            ],
            cloudAdminToken: "", gatewayAdminToken: LiveGateway.adminToken)
        return try system.gateway(
            "", dataDirectory: dataDirectory,
            extra: """
                [limits]
                max_body_bytes = 2048
                [objects]
                max_bytes = \(maxBytes)
                gc_grace = "1h"
                """)
    }

    /// Small chunks, so that small test objects span several of them.
    static let smallChunks = ChunkingParameters.fastCDC(average: 4096)

    /// Serves `config` on an ephemeral port for the duration of `body`.
    static func run<T: Sendable>(
        _ config: GatewayConfig, fetcher: (any ObjectFetching)? = nil, chunking: ChunkingParameters = smallChunks,
        _ body: @Sendable (ObjectGateway) async throws -> T
    ) async throws -> T {
        let gateway = try Gateway(
            config: config, logger: Logger(label: "test"), objectFetcher: fetcher, chunking: chunking)
        let runner = ServiceRunner()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let (store, objects) = (gateway.store, gateway.objects)
        do {
            try await runner.start { report in [gateway.application(port: 0, onServerRunning: report), gateway.hub] }
            let live = LiveGateway(hub: gateway.hub, port: runner.port, http: http)
            let result = try await body(ObjectGateway(live: live, store: store, objects: objects))
            try await runner.stop()
            try await http.shutdown()
            try objects.chunkStore.close()
            try store.close()
            try? FileManager.default.removeItem(atPath: store.directory)
            return result
        } catch {
            try? await runner.stop()
            try? await http.shutdown()
            try? objects.chunkStore.close()
            try? store.close()
            try? FileManager.default.removeItem(atPath: store.directory)
            throw error
        }
    }

    struct Reply: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let bytes: [UInt8]
        var json: JSONValue { (try? JSONParser.parse(bytes)) ?? .null }
        var errorCode: String? { json["error"]?["code"]?.string }
        func header(_ name: String) -> String? { headers[name].first }
    }

    /// Sends `bytes` (or nothing) and collects the answer.
    func send(
        _ method: HTTPMethod, _ path: String, token: String? = LiveGateway.clientToken, bytes: [UInt8]? = nil,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(live.port)\(path)")
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let bytes { request.body = .bytes(ByteBuffer(bytes: bytes)) }
        return try await execute(request)
    }

    /// Sends a body of `length` seeded bytes generated as it goes (`announce`: with
    /// `Content-Length`, else chunked), failing the stream after `failAfter` bytes if given.
    func stream(
        _ method: HTTPMethod, _ path: String, seed: UInt64, length: Int, announce: Bool = true, failAfter: Int? = nil,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(live.port)\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(LiveGateway.clientToken)")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let pieces = SeededPieces(seed: seed, length: length, failAfter: failAfter)
        request.body = .stream(pieces, length: announce ? .known(Int64(length)) : .unknown)
        return try await execute(request)
    }

    private func execute(_ request: HTTPClientRequest) async throws -> Reply {
        let response = try await live.http.execute(request, timeout: .seconds(120))
        let body = try await response.body.collect(upTo: 64 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, bytes: Array(buffer: body))
    }

    /// GETs `path` and hashes the body as it arrives, never holding it: (status, size, hash).
    func streamedDigest(_ path: String) async throws -> (status: Int, size: Int64, hash: ContentHash) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(live.port)\(path)")
        request.headers.add(name: "Authorization", value: "Bearer \(LiveGateway.clientToken)")
        let response = try await live.http.execute(request, timeout: .seconds(120))
        var hash = StreamingHash()
        for try await buffer in response.body {
            buffer.withUnsafeReadableBytes { hash.update($0) }
        }
        return (Int(response.status.code), hash.count, hash.finalize())
    }

    func stats() async throws -> JSONValue { try await live.stats() }

    /// Waits, boundedly, until the gateway has answered `count` requests to `route` with
    /// `status` (a request whose client went away is answered to nobody, but counted).
    func answered(_ method: HTTPMethod, route: String, status: Int, count: Int) async throws -> Bool {
        for _ in 0..<2_000 {
            let requests = try await stats()["requests"]?.array ?? []
            let answered = requests.first {
                $0["route"]?.string == route && $0["method"]?.string == method.rawValue && $0["status"]?.int == Int64(status)
            }
            if answered?["count"]?.int == Int64(count) { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}

/// `length` seeded bytes in 64 KiB pieces, made as they are asked for; the same bytes as
/// `SeededBytes.bytes(_:seed:)`. Fails after `failAfter` bytes, like a client that dies.
struct SeededPieces: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let seed: UInt64
    let length: Int
    let failAfter: Int?

    struct Died: Error {}

    struct AsyncIterator: AsyncIteratorProtocol {
        var generator: SeededBytes
        var remaining: Int
        var sent = 0
        let failAfter: Int?

        mutating func next() async throws -> ByteBuffer? {
            if let failAfter, sent >= failAfter { throw Died() }
            guard remaining > 0 else { return nil }
            var size = Swift.min(remaining, 64 << 10)
            if let failAfter { size = Swift.min(size, failAfter - sent) }
            remaining -= size
            sent += size
            return ByteBuffer(bytes: generator.bytes(size))
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(generator: SeededBytes(seed: seed), remaining: length, failAfter: failAfter)
    }
}

/// This process's peak resident set, in bytes, since the last ``resetPeakRSS()``.
func peakRSS() -> Int64? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kB = Int64(line.split(separator: " ").dropFirst().first ?? "")
    else { return nil }
    return kB * 1024
}

/// Resets the peak resident set to the current one (Linux `clear_refs` 5); false where that
/// is not possible.
func resetPeakRSS() -> Bool {
    guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
    defer { try? handle.close() }
    do {
        try handle.write(contentsOf: Data("5".utf8))
        return true
    } catch {
        return false
    }
}
