import ArgumentParser
import AsyncHTTPClient
import DallyCloud
import DallyConfig
import DallyCore
import DallyFrugal
import DallyGateway
import DallyObjects
import DallyStore
import DallyTestSupport
import Foundation
import Logging
import NIOCore

/// `dally-bench objects`: streaming an object through a real gateway and a real cloud on
/// loopback — client → gateway (chunk, hash, store), gateway → cloud (ask, send chunks,
/// manifest), gateway → client (read back) — in MB/s with the peak resident memory of each
/// step, next to the limits measured in the same run: SHA-256 alone, chunking + SHA-256, and
/// 1 MiB blob inserts into the chunk store. Then the bytes an edit sends.
struct BenchObjects: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "objects",
        abstract: "Object streaming throughput and memory on loopback, and the bytes an edit sends."
    )

    @Option(help: "Object size in MiB.") var mib = 512
    @Option(help: "Server log level.") var logLevel = "error"

    static let token = "objects-bench-client-token"
    static let admin = "objects-bench-admin-token"

    func run() async throws {
        let size = mib << 20
        let root = try BenchOutput.temporaryDirectory("objects")
        defer { try? FileManager.default.removeItem(atPath: root) }
        print("object: \(mib) MiB of seeded incompressible bytes; release build; loopback\n")
        var rows: [[String]] = [["step", "MB/s", "peak RSS MiB", "notes"]]
        rows += try await limits(root: root)

        let (system, gatewayConfig) = Self.configs(logLevel: logLevel)
        let live = LiveSystem(
            config: system, root: root, label: "dally.bench", logLevel: Logger.Level(rawValue: logLevel),
            gracefulShutdownLimit: ServiceRunner.benchShutdownLimit)
        do {
            try await live.startCloud()
            try await live.startGateway("edge", try gatewayConfig(live))
        } catch {
            try? await live.shutdown(cloudFirst: true)
            throw error
        }
        let base = "http://127.0.0.1:\(live.port(of: "edge"))"
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let object = SyntheticObject(size: size, seed: 7)
            PeakMemory.reset()
            let put = try await Self.timed { try await Self.put(object, to: base, http: http) }
            rows.append(["client → gateway PUT", Self.rate(size, put), PeakMemory.mebibytes, "chunk + SHA-256 + store"])

            PeakMemory.reset()
            let sync = try await Self.timed { try await Self.sync(base, http: http) }
            rows.append(["gateway → cloud sync", Self.rate(size, sync), PeakMemory.mebibytes, "ask, chunks (zstd probe), manifest"])

            PeakMemory.reset()
            let (get, digest) = try await Self.timedValue { try await Self.get(from: base, http: http) }
            guard digest == object.hash else { throw BenchError("the object read back differs") }
            rows.append(["gateway → client GET", Self.rate(size, get), PeakMemory.mebibytes, "byte-exact"])

            var edited = object
            edited.edits = [(size / 2..<size / 2 + (1 << 20), 8)]
            let before = try await Self.counter(base, "object_chunk_bytes_sent", http: http)
            _ = try await Self.put(edited, to: base, http: http)
            _ = try await Self.sync(base, http: http)
            let sent = try await Self.counter(base, "object_chunk_bytes_sent", http: http) - before
            BenchOutput.table(rows)
            print("\n1 MiB overwritten in the middle of \(mib) MiB: \(sent) chunk bytes sent (\(String(format: "%.1f", Double(size) / Double(max(sent, 1))))× less than the object)")
        } catch {
            try? await http.shutdown()
            try? await live.shutdown()
            throw error
        }
        try await http.shutdown()
        try await live.shutdown()
    }

    /// The limits in the same run: hashing, chunking + hashing, and chunk store inserts.
    private func limits(root: String) async throws -> [[String]] {
        let sample = SyntheticObject.seeded(at: 0, count: 64 << 20, seed: 9)
        let hash = try await Self.timed { _ = ContentHash.of(sample) }
        var chunker = StreamingChunker()
        var chunks = 0
        let chunking = try await Self.timed {
            sample.withUnsafeBytes { raw in
                chunker.append(raw) { piece in
                    _ = ContentHash.of(piece)
                    chunks += 1
                }
                chunker.finish { piece in
                    _ = ContentHash.of(piece)
                    chunks += 1
                }
            }
        }
        try FileManager.default.createDirectory(atPath: root + "/limit", withIntermediateDirectories: true)
        let store = try SQLiteChunkStore.open(directory: root + "/limit", synchronousFull: false)
        let blob = Array(sample[0..<(1 << 20)])
        let inserts = try await Self.timed {
            for n in 0..<64 {
                var bytes = blob
                bytes[0] = UInt8(n)
                _ = try await store.put(ContentHash.of(bytes), bytes: bytes, now: 0)
            }
        }
        try store.close()
        return [
            ["limit: SHA-256", Self.rate(sample.count, hash), "", "swift-crypto"],
            ["limit: chunking + SHA-256", Self.rate(sample.count, chunking), "", "\(chunks) chunks in 64 MiB"],
            ["limit: chunk store insert", Self.rate(64 << 20, inserts), "", "1 MiB blobs, synchronous NORMAL"],
        ]
    }

    // MARK: - Steps

    static func put(_ object: SyntheticObject, to base: String, http: HTTPClient) async throws {
        var request = HTTPClientRequest(url: base + "/v1/tables/files/rows/f1/objects/blob")
        request.method = .PUT
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.body = .stream(object.pieces(), length: .known(Int64(object.size)))
        let response = try await http.execute(request, timeout: .seconds(3600))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard (200...201).contains(response.status.code) else {
            throw BenchError("PUT object: \(response.status.code) \(String(buffer: body))")
        }
    }

    static func sync(_ base: String, http: HTTPClient) async throws {
        var request = HTTPClientRequest(url: base + "/v1/tables/files/sync")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(3600))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else { throw BenchError("sync: \(response.status.code) \(String(buffer: body))") }
    }

    static func get(from base: String, http: HTTPClient) async throws -> ContentHash {
        var request = HTTPClientRequest(url: base + "/v1/tables/files/rows/f1/objects/blob")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(3600))
        guard response.status == .ok else { throw BenchError("GET object: \(response.status.code)") }
        var hasher = StreamingHash()
        for try await piece in response.body { piece.withUnsafeReadableBytes { hasher.update($0) } }
        return hasher.finalize()
    }

    static func counter(_ base: String, _ name: String, http: HTTPClient) async throws -> Int64 {
        var request = HTTPClientRequest(url: base + "/stats")
        request.headers.add(name: "Authorization", value: "Bearer \(admin)")
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 << 20)
        guard case .int(let value)? = try JSONParser.parse(Array(body.readableBytesView))["sync"]?[name] else {
            throw BenchError("no sync.\(name) in the gateway's stats")
        }
        return value
    }

    // MARK: - Support

    static func timed(_ body: () async throws -> Void) async throws -> Duration {
        let start = ContinuousClock.now
        try await body()
        return ContinuousClock.now - start
    }

    static func timedValue<T>(_ body: () async throws -> T) async throws -> (Duration, T) {
        let start = ContinuousClock.now
        let value = try await body()
        return (ContinuousClock.now - start, value)
    }

    static func rate(_ bytes: Int, _ duration: Duration) -> String {
        String(format: "%.0f", Double(bytes) / 1_000_000 / max(duration.benchSeconds, 1e-9))
    }

    /// The cloud (which knows `edge`) and a function making `edge`'s configuration once the
    /// cloud listens: `files` with an OBJECT column, nothing synced until asked.
    static func configs(logLevel: String) -> (SystemConfig, (LiveSystem) throws -> GatewayConfig) {
        let system = SystemConfig(
            tables: [.init("files", columns: ["name TEXT", "blob OBJECT"])],
            gateways: [.init(id: "edge", secret: "objects-bench-secret-edge")],
            clients: [.init(name: "bench", token: token)],
            cloudAdminToken: admin, gatewayAdminToken: admin, logLevel: logLevel, loopbackAnyPort: true,
            synchronous: "normal")
        let gateway = { (live: LiveSystem) throws -> GatewayConfig in
            try system.gateway(
                "edge", dataDirectory: live.directory("gateway"),
                link: .init(url: live.cloudURL, notifyNetworks: []),
                tables: [
                    .init(
                        "files", columns: ["name TEXT", "blob OBJECT"], upload: #"{ max_delay = "1h" }"#,
                        uploadObjects: #"{ max_delay = "1h" }"#)
                ])
        }
        return (system, gateway)
    }
}
