import AsyncHTTPClient
import DallyCloud
import DallyCompression
import DallyConfig
import DallyCore
import DallyObjects
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// The cloud's object endpoints over real HTTP (PROTOCOL.md §13): ask, chunks, manifest,
/// reads, atomic rows and collection. A cloud alone, called as a gateway would.
@Suite struct CloudObjectTests {
    // MARK: Harness

    /// A cloud on 127.0.0.1 with an atomic table and a plain one holding OBJECT columns, a
    /// wall clock the test moves, and an HTTP client.
    final class ObjectCloud: @unchecked Sendable {
        static let admin = "test-cloud-admin-0123456789"
        static let secret = "secret-of-gateway-a-0123"
        static let grace: Int64 = 3_600_000

        let root = ScratchSpace.path("dally-cloud-objects-")
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let server = ServiceRunner()
        let millis = Mutex<Int64>(1_800_000_000_000)
        private(set) var cloud: Cloud<ContinuousClock>?

        var now: Int64 { millis.withLock { $0 } }
        func advance(_ delta: Int64) { millis.withLock { $0 += delta } }

        func config() throws -> CloudConfig {
            let system = SystemConfig(
                tables: [
                    .init("photos", columns: ["caption TEXT", "image OBJECT"], atomicSync: true),
                    .init("files", columns: ["name TEXT", "content OBJECT"]),
                ],
                gateways: [.init(id: "gw-a", secret: Self.secret)], clients: [], cloudAdminToken: Self.admin,
                gatewayAdminToken: "")
            return try system.cloud(
                dataDirectory: "\(root)/cloud",
                extra: """
                    [limits]
                    max_body_bytes = 65536
                    max_decompressed_bytes = 262144
                    [objects]
                    max_bytes = 1000000
                    gc_grace = "1h"
                    """)
        }

        static func run(_ body: (ObjectCloud) async throws -> Void) async throws {
            let system = ObjectCloud()
            do {
                let config = try system.config()
                try await system.server.start { report in
                    let cloud = try Cloud(config: config, logger: Logger(label: "test"), now: { system.now })
                    system.cloud = cloud
                    return cloud.services(port: 0, onServerRunning: report)
                }
                try await body(system)
                try await system.shutdown()
            } catch {
                try? await system.shutdown()
                throw error
            }
        }

        func shutdown() async throws {
            try await server.stop()
            try cloud?.store.close()
            cloud = nil
            try await http.shutdown()
            try? FileManager.default.removeItem(atPath: root)
        }

        struct Reply: Sendable {
            let status: Int
            let headers: HTTPHeaders
            let bytes: [UInt8]
            var json: JSONValue { (try? JSONParser.parse(bytes)) ?? .null }
            var errorCode: String? { json["error"]?["code"]?.string }
        }

        /// A request as gateway `gw-a`, or with no credentials when `authorized` is false.
        func request(
            _ method: HTTPMethod, _ path: String, authorized: Bool = true, headers: [(String, String)] = [],
            body: [UInt8]? = nil
        ) async throws -> Reply {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)\(path)")
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if authorized {
                request.headers.add(
                    name: "Authorization", value: "Basic " + Data("gw-a:\(Self.secret)".utf8).base64EncodedString())
            }
            if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
            let response = try await http.execute(request, timeout: .seconds(60))
            let bytes = try await response.body.collect(upTo: 32 << 20)
            return Reply(status: Int(response.status.code), headers: response.headers, bytes: Array(buffer: bytes))
        }

        func ask(_ hashes: [String]) async throws -> Reply {
            let list = hashes.map { "\"\($0)\"" }.joined(separator: ",")
            return try await request(.POST, "/v1/chunks/missing", body: Array(#"{"chunks":[\#(list)]}"#.utf8))
        }

        func putChunk(_ bytes: [UInt8], as hash: ContentHash? = nil, headers: [(String, String)] = []) async throws -> Reply {
            try await request(.PUT, "/v1/chunks/\((hash ?? ContentHash.of(bytes)).hex)", headers: headers, body: bytes)
        }

        func putManifest(_ manifest: ObjectManifest, at hash: ContentHash? = nil, query: String = "") async throws -> Reply {
            try await request(
                .PUT, "/v1/objects/\((hash ?? manifest.hash).hex)\(query)", body: Array(manifest.json.jsonText.utf8))
        }

        /// Puts all of `object`'s chunks but the last, then its manifest with `?wait=` as a task
        /// of its own (`answered` runs when its answer came), returned once the cloud counts it
        /// as waiting.
        func manifestAwaitingLastChunk(
            _ object: TestObject, wait: String, answered: @escaping @Sendable () -> Void = {}
        ) async throws -> Task<Reply, any Error> {
            for chunk in object.chunks.dropLast() { #expect(try await putChunk(chunk).status == 201) }
            let waitedBefore = try await stats()["objects"]?["manifests_waited"]?.int ?? 0
            let manifest = Task {
                defer { answered() }
                return try await self.putManifest(object.manifest, query: "?wait=\(wait)")
            }
            #expect(
                try await eventually(within: .seconds(30)) {
                    try await self.stats()["objects"]?["manifests_waited"]?.int == waitedBefore + 1
                })
            return manifest
        }

        /// Uploads an object the way a gateway does: ask, the missing chunks, the manifest.
        func upload(_ object: TestObject) async throws -> Reply {
            let missing = try await ask(object.manifest.chunks.map(\.hash.hex)).json["missing"]?.array ?? []
            for case .string(let hex) in missing {
                guard let chunk = object.chunks.first(where: { ContentHash.of($0).hex == hex }) else { continue }
                #expect(try await putChunk(chunk).status == 201)
            }
            return try await putManifest(object.manifest)
        }

        func stats() async throws -> JSONValue {
            try await request(.GET, "/stats", authorized: false, headers: [("Authorization", "Bearer \(Self.admin)")]).json
        }

        /// Sends a batch of `photos` or `files` rows `[id, caption, reference]`; the answer.
        func batch(_ id: String, table: String, rows: [(String, String, JSONValue)]) async throws -> Reply {
            let columns = table == "photos" ? #"["caption","image"]"# : #"["name","content"]"#
            let encoded = rows.map { row in
                JSONValue.array([.string(row.0), .null, .int(1_000), .string("put"), .string(row.1), row.2]).jsonText
            }
            let body = #"{"batch":"\#(id)","gateway":"gw-a","replica":"r-1","sections":[{"table":"\#(table)","columns":\#(columns),"rows":[\#(encoded.joined(separator: ","))]}]}"#
            return try await request(.POST, "/v1/batches", body: Array(body.utf8))
        }
    }

    /// An object in chunks, made from `seed`.
    struct TestObject {
        let chunks: [[UInt8]]
        let manifest: ObjectManifest
        var hash: ContentHash { manifest.hash }

        init(seed: Int, sizes: [Int] = [3_000, 2_000, 1_000]) throws {
            try self.init(chunks: sizes.enumerated().map { i, size in
                (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ seed &* 17 &+ i &* 5 &+ $0 >> 7) }
            })
        }

        init(chunks: [[UInt8]]) throws {
            self.chunks = chunks
            let whole = chunks.flatMap { $0 }
            manifest = try ObjectManifest(
                hash: ContentHash.of(whole), size: Int64(whole.count),
                chunks: chunks.map { ChunkEntry(hash: ContentHash.of($0), size: $0.count) })
        }
    }

    // MARK: Chunks

    @Test func askingFirstNamesExactlyTheMissingChunks() async throws {
        try await ObjectCloud.run { cloud in
            let held = [UInt8](repeating: 1, count: 100)
            let (a, b, c) = (ContentHash.of(held).hex, ContentHash.of([2]).hex, ContentHash.of([3]).hex)
            #expect(try await cloud.putChunk(held).status == 201)
            let reply = try await cloud.ask([b, a, c, b.uppercased()])
            #expect(reply.status == 200)
            #expect(reply.json["missing"] == .array([.string(b), .string(c)]))
            #expect(try await cloud.ask([]).json["missing"] == .array([]))

            let bad = try await cloud.ask([a, "not-a-hash"])
            #expect(bad.status == 400)
            #expect(bad.errorCode == "bad_request")
            #expect(bad.json["error"]?["field"]?.string == "chunks[1]")
            // A full ask fits even though limits.max_body_bytes (64 KiB) is smaller; one more does not.
            #expect(try await cloud.ask(Array(repeating: a, count: 10_000)).json["missing"] == .array([]))
            #expect(try await cloud.ask(Array(repeating: a, count: 10_001)).status == 400)
            #expect(try await cloud.request(.POST, "/v1/chunks/missing", body: Array("[]".utf8)).status == 400)
        }
    }

    @Test func aChunkIsStoredOnceAndItsHashIsChecked() async throws {
        try await ObjectCloud.run { cloud in
            // Larger than limits.max_body_bytes (64 KiB): chunk routes take chunk-sized bodies.
            let chunk = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
            let first = try await cloud.putChunk(chunk)
            #expect(first.status == 201, "\(first.json)")
            #expect(first.json == .object([JSONMember("stored", .bool(true))]))
            let second = try await cloud.putChunk(chunk)
            #expect(second.status == 200)
            #expect(second.json["stored"] == .bool(false))
            // Other routes keep the limit.
            let batch = try await cloud.request(.POST, "/v1/batches", body: chunk)
            #expect(batch.status == 413)

            // The wrong bytes for a hash: refused, and not stored under it.
            let other = Array("some other bytes".utf8)
            let wrong = try await cloud.putChunk(other, as: ContentHash.of(Array("the named bytes".utf8)))
            #expect(wrong.status == 422)
            #expect(wrong.errorCode == "hash_mismatch")
            #expect(try await cloud.ask([ContentHash.of(Array("the named bytes".utf8)).hex, ContentHash.of(other).hex])
                .json["missing"]?.array?.count == 2)

            // zstd on the wire; the hash is of the decoded bytes.
            let text = Array(String(repeating: "a compressible chunk of text. ", count: 400).utf8)
            let zstd = try await cloud.putChunk(
                try Compressor.compress(text, coding: .zstd, level: 3), as: ContentHash.of(text),
                headers: [("Content-Encoding", "zstd")])
            #expect(zstd.status == 201, "\(zstd.json)")
            let back = try await cloud.request(.GET, "/v1/chunks/\(ContentHash.of(text).hex)")
            #expect(back.bytes == text)

            #expect(try await cloud.putChunk([], as: ContentHash.of([UInt8]())).errorCode == "bad_request")
            // A few bytes on the wire that decode past the largest chunk.
            let huge = [UInt8](repeating: 0, count: ObjectManifest.maxChunkBytes + 1)
            let tooLarge = try await cloud.putChunk(
                try Compressor.compress(huge, coding: .zstd, level: 3), as: ContentHash.of(huge),
                headers: [("Content-Encoding", "zstd")])
            #expect(tooLarge.status == 413)
            #expect(tooLarge.errorCode == "body_too_large")

            let objects = try await cloud.stats()["objects"]
            #expect(objects?["chunks"]?.int == 2)
            #expect(objects?["chunk_bytes"]?.int == Int64(chunk.count + text.count))
            #expect(objects?["chunks_received"]?.int == 3)
            #expect(objects?["chunks_deduplicated"]?.int == 1)
            #expect(objects?["bytes_deduplicated"]?.int == Int64(chunk.count))
        }
    }

    @Test func aChunkIsReadBackCompressedWhenAskedAndCachedByItsHash() async throws {
        try await ObjectCloud.run { cloud in
            let text = Array(String(repeating: "the same words again and again ", count: 300).utf8)
            let hash = ContentHash.of(text)
            #expect(try await cloud.putChunk(text).status == 201)

            let plain = try await cloud.request(.GET, "/v1/chunks/\(hash.hex)")
            #expect(plain.status == 200)
            #expect(plain.bytes == text)
            #expect(plain.headers.first(name: "Content-Type") == "application/octet-stream")
            #expect(plain.headers.first(name: "ETag") == "\"\(hash.hex)\"")
            #expect(plain.headers.first(name: "Content-Encoding") == nil)

            let compressed = try await cloud.request(
                .GET, "/v1/chunks/\(hash.hex)", headers: [("Accept-Encoding", "zstd, deflate")])
            #expect(compressed.headers.first(name: "Content-Encoding") == "zstd")
            #expect(compressed.bytes.count < text.count)
            #expect(try Decompressor.decompress(compressed.bytes, coding: .zstd, maxOutput: 1 << 20) { _ in nil } == text)

            let cached = try await cloud.request(.GET, "/v1/chunks/\(hash.hex)", headers: [("If-None-Match", "\"\(hash.hex)\"")])
            #expect(cached.status == 304)

            let unknown = try await cloud.request(.GET, "/v1/chunks/\(ContentHash.of([42]).hex)")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "not_found")
        }
    }

    @Test func aCutChunkDownloadResumesByRangeInTheEncodingItStartedIn() async throws {
        try await ObjectCloud.run { cloud in
            let text = Array(String(repeating: "words that compress, over and over. ", count: 500).utf8)
            let hash = ContentHash.of(text)
            #expect(try await cloud.putChunk(text).status == 201)
            let path = "/v1/chunks/\(hash.hex)"

            let head = try await cloud.request(.GET, path, headers: [("Range", "bytes=0-99")])
            #expect(head.status == 206)
            #expect(head.bytes == Array(text[0..<100]))
            #expect(head.headers.first(name: "Content-Range") == "bytes 0-99/\(text.count)")
            #expect(head.headers.first(name: "Accept-Ranges") == "bytes")
            let rest = try await cloud.request(.GET, path, headers: [("Range", "bytes=100-")])
            #expect(rest.status == 206)
            #expect(head.bytes + rest.bytes == text)

            // Compressed, the range is of the compressed bytes, and the pieces make the whole.
            let zstd = [("Accept-Encoding", "zstd")]
            let whole = try await cloud.request(.GET, path, headers: zstd)
            let first = try await cloud.request(.GET, path, headers: zstd + [("Range", "bytes=0-9")])
            let second = try await cloud.request(.GET, path, headers: zstd + [("Range", "bytes=10-")])
            #expect(first.headers.first(name: "Content-Encoding") == "zstd")
            #expect(second.headers.first(name: "Content-Range") == "bytes 10-\(whole.bytes.count - 1)/\(whole.bytes.count)")
            #expect(first.bytes + second.bytes == whole.bytes)
            #expect(try Decompressor.decompress(first.bytes + second.bytes, coding: .zstd, maxOutput: 1 << 20) { _ in nil } == text)

            // Past the end: 416, the size in Content-Range, the usual JSON error.
            let beyond = try await cloud.request(.GET, path, headers: [("Range", "bytes=\(text.count)-")])
            #expect(beyond.status == 416)
            #expect(beyond.errorCode == "range_not_satisfiable")
            #expect(beyond.headers.first(name: "Content-Range") == "bytes */\(text.count)")
            // A header that is not a byte range is ignored: the whole chunk.
            #expect(try await cloud.request(.GET, path, headers: [("Range", "lines=1-2")]).bytes == text)
        }
    }

    @Test func hashesInPathsAndCredentialsAreChecked() async throws {
        try await ObjectCloud.run { cloud in
            for path in ["/v1/chunks/abc", "/v1/chunks/\(String(repeating: "g", count: 64))", "/v1/objects/..%2Fcloud.sqlite"] {
                let reply = try await cloud.request(.GET, path)
                #expect(reply.status == 400, "\(path)")
                #expect(reply.errorCode == "bad_request")
                #expect(reply.json["error"]?["field"]?.string == "hash")
            }
            #expect(try await cloud.request(.PUT, "/v1/objects/abc", body: Array("{}".utf8)).status == 400)
            #expect(try await cloud.request(.PUT, "/v1/chunks/abc", body: [1]).status == 400)

            let hash = ContentHash.of([1]).hex
            for (method, path) in [
                (HTTPMethod.POST, "/v1/chunks/missing"), (.PUT, "/v1/chunks/\(hash)"), (.GET, "/v1/chunks/\(hash)"),
                (.PUT, "/v1/objects/\(hash)"), (.GET, "/v1/objects/\(hash)"),
            ] {
                let reply = try await cloud.request(method, path, authorized: false, body: method == .GET ? nil : [1])
                #expect(reply.status == 401, "\(method) \(path)")
                #expect(reply.errorCode == "unauthorized")
            }
            #expect(try await cloud.stats()["objects"]?["chunks"]?.int == 0)
        }
    }

    // MARK: Manifests

    @Test func aManifestIsAcceptedOnlyWhenItsChunksAreThereAndHashToIt() async throws {
        try await ObjectCloud.run { cloud in
            let object = try TestObject(seed: 1)
            // Two chunks of three up: 409, naming the third; nothing recorded.
            for chunk in object.chunks.prefix(2) { #expect(try await cloud.putChunk(chunk).status == 201) }
            let short = try await cloud.putManifest(object.manifest)
            #expect(short.status == 409)
            #expect(short.errorCode == "missing_chunks")
            #expect(short.json["missing"] == .array([.string(ContentHash.of(object.chunks[2]).hex)]))
            #expect(try await cloud.request(.GET, "/v1/objects/\(object.hash.hex)").status == 404)

            // The resumed walk: ask again, send what is missing, then the manifest.
            let stored = try await cloud.upload(object)
            #expect(stored.status == 201, "\(stored.json)")
            #expect(stored.json == object.manifest.reference.json)
            let again = try await cloud.putManifest(object.manifest)
            #expect(again.status == 200)
            #expect(again.json == object.manifest.reference.json)

            let read = try await cloud.request(.GET, "/v1/objects/\(object.hash.hex)")
            #expect(read.status == 200)
            #expect(try ObjectManifest(json: read.json) == object.manifest)
            let manifestsReceived = try await cloud.stats()["objects"]?["manifests_received"]?.int
            #expect(manifestsReceived == 2)
            #expect(try await cloud.stats()["objects"]?["objects"]?.int == 1)
        }
    }

    /// On a long link the gateway sends the manifest while the last chunk is on the wire
    /// (`?wait=`): the cloud answers it once the chunk lands, and refuses it as usual, naming
    /// the chunks, when they do not come within the wait.
    @Test func aManifestSentAheadOfItsLastChunkWaitsForIt() async throws {
        try await ObjectCloud.run { cloud in
            let object = try TestObject(seed: 4)
            let manifest = try await cloud.manifestAwaitingLastChunk(object, wait: "60")
            #expect(try await cloud.request(.GET, "/v1/objects/\(object.hash.hex)").status == 404)
            #expect(try await cloud.putChunk(object.chunks[2]).status == 201)
            let answer = try await manifest.value
            #expect(answer.status == 201, "\(answer.json)")
            #expect(answer.json == object.manifest.reference.json)
            #expect(try await cloud.request(.GET, "/v1/objects/\(object.hash.hex)").status == 200)

            // A chunk that never comes: the wait runs out and the answer names it.
            let other = try TestObject(seed: 5)
            for chunk in other.chunks.prefix(2) { #expect(try await cloud.putChunk(chunk).status == 201) }
            let short = try await cloud.putManifest(other.manifest, query: "?wait=0.2")
            #expect(short.status == 409)
            #expect(short.errorCode == "missing_chunks")
            #expect(short.json["missing"] == .array([.string(ContentHash.of(other.chunks[2]).hex)]))
            #expect(try await cloud.stats()["objects"]?["manifests_waited"]?.int == 2)

            // A wait that is not a duration, or another parameter: 400, nothing recorded.
            for query in ["?wait=soon", "?later=1"] {
                let bad = try await cloud.putManifest(other.manifest, query: query)
                #expect(bad.status == 400)
                #expect(bad.errorCode == "bad_query")
            }
            #expect(try await cloud.stats()["objects"]?["objects"]?.int == 1)
        }
    }

    /// A cloud that stops answers a waiting manifest at once, naming what it lacks, instead of
    /// holding its drain for the wait (here up to `limits.max_wait`, 120 s).
    @Test func aStoppingCloudAnswersAWaitingManifest() async throws {
        try await ObjectCloud.run { cloud in
            let object = try TestObject(seed: 6)
            final class Answered: Sendable { let flag = Mutex(false) }
            let answered = Answered()
            let manifest = try await cloud.manifestAwaitingLastChunk(object, wait: "600") {
                answered.flag.withLock { $0 = true }
            }
            let stopping = Task { try await cloud.server.stop() }
            let answeredSoon = try await eventually(within: .seconds(30)) { answered.flag.withLock { $0 } }
            #expect(answeredSoon, "the manifest still waits while the cloud stops")
            let answer = try await manifest.value
            #expect(answer.status == 409)
            #expect(answer.errorCode == "missing_chunks")
            try await stopping.value
        }
    }

    @Test func aManifestWhoseChunksDoNotMakeItsContentIsRefused() async throws {
        try await ObjectCloud.run { cloud in
            let object = try TestObject(seed: 2)
            for chunk in object.chunks { #expect(try await cloud.putChunk(chunk).status == 201) }
            // The same chunks in another order: each is real, the whole is not the object.
            let swapped = try ObjectManifest(
                hash: object.hash, size: object.manifest.size,
                chunks: [object.manifest.chunks[1], object.manifest.chunks[0], object.manifest.chunks[2]])
            let reply = try await cloud.putManifest(swapped)
            #expect(reply.status == 422)
            #expect(reply.errorCode == "hash_mismatch")
            #expect(try await cloud.request(.GET, "/v1/objects/\(object.hash.hex)").status == 404)

            // A manifest of another object at this path; sizes that do not add up.
            let other = try TestObject(seed: 3)
            let misplaced = try await cloud.putManifest(other.manifest, at: object.hash)
            #expect(misplaced.status == 400)
            #expect(misplaced.json["error"]?["field"]?.string == "hash")
            let lying = #"{"hash":"\#(object.hash.hex)","size":5,"chunks":[["\#(object.manifest.chunks[0].hash.hex)",3000]]}"#
            let bad = try await cloud.request(.PUT, "/v1/objects/\(object.hash.hex)", body: Array(lying.utf8))
            #expect(bad.status == 400)
            #expect(bad.errorCode == "bad_request")
            #expect(try await cloud.stats()["objects"]?["objects"]?.int == 0)
        }
    }

    @Test func anObjectLargerThanTheLimitIsRefused() async throws {
        try await ObjectCloud.run { cloud in
            let entry = ChunkEntry(hash: ContentHash.of([5]), size: 1_000_001)
            let manifest = try ObjectManifest(hash: ContentHash.of([6]), size: 1_000_001, chunks: [entry])
            let reply = try await cloud.putManifest(manifest)
            #expect(reply.status == 413)
            #expect(reply.errorCode == "object_too_large")
        }
    }

    // MARK: Rows

    @Test func anAtomicRowIsRefusedUntilItsObjectIsUpWhileTheRestApplies() async throws {
        try await ObjectCloud.run { cloud in
            let up = try TestObject(seed: 4)
            let later = try TestObject(seed: 5)
            #expect(try await cloud.upload(up).status == 201)
            let first = try await cloud.batch(
                "b1", table: "photos",
                rows: [("p1", "up", up.manifest.reference.json), ("p2", "later", later.manifest.reference.json)])
            #expect(first.status == 200)
            let rows = first.json["results"]?.array?.first?["rows"]?.array ?? []
            #expect(rows.first == .array([.int(1), .int(1)]))
            let refused = try #require(rows.last?.array)
            #expect(rows.count == 2)
            #expect(refused.count == 3)
            #expect(refused.first == .string("p2"))
            #expect(refused.dropFirst().first == .string("error"))
            #expect(refused.last?["code"]?.string == "unknown_object")
            #expect(refused.last?["field"]?.string == "image")

            #expect(try await cloud.upload(later).status == 201)
            let second = try await cloud.batch("b2", table: "photos", rows: [("p2", "later", later.manifest.reference.json)])
            #expect(second.json["results"]?.array?.first?["rows"] == .array([.array([.int(1), .int(2)])]))

            // Downstream, the reference is the JSON object that went up.
            let page = try await cloud.request(.GET, "/v1/tables/photos/changes?since=0")
            let values = page.json["rows"]?.array?.map { $0.array?.last }
            #expect(values == [up.manifest.reference.json, later.manifest.reference.json])
        }
    }

    // MARK: Collection

    @Test func collectionKeepsReferencedAndYoungObjectsAndChunks() async throws {
        try await ObjectCloud.run { cloud in
            let referenced = try TestObject(seed: 6)
            let unreferenced = try TestObject(seed: 7)
            #expect(try await cloud.upload(referenced).status == 201)
            #expect(try await cloud.upload(unreferenced).status == 201)
            let batch = try await cloud.batch("b1", table: "files", rows: [("f1", "kept", referenced.manifest.reference.json)])
            #expect(batch.status == 200)

            // Within the grace period nothing goes, referenced or not.
            let collector = try #require(cloud.cloud?.collector)
            #expect(try await collector.collect(now: cloud.now).objects == 0)

            cloud.advance(ObjectCloud.grace + 1)
            // An upload under way: a chunk without its manifest yet, younger than the grace.
            let pending = Array("the first chunk of an upload still going on".utf8)
            #expect(try await cloud.putChunk(pending).status == 201)
            let collection = try await collector.collect(now: cloud.now)
            #expect(collection.objects == 1)
            #expect(collection.chunks == 3)

            #expect(try await cloud.request(.GET, "/v1/objects/\(unreferenced.hash.hex)").status == 404)
            for chunk in unreferenced.chunks {
                #expect(try await cloud.request(.GET, "/v1/chunks/\(ContentHash.of(chunk).hex)").status == 404)
            }
            #expect(try await cloud.request(.GET, "/v1/objects/\(referenced.hash.hex)").status == 200)
            #expect(try await cloud.ask(referenced.chunks.map { ContentHash.of($0).hex } + [ContentHash.of(pending).hex])
                .json["missing"] == .array([]))

            let objects = try await cloud.stats()["objects"]
            #expect(objects?["gc_runs"]?.int == 2)
            #expect(objects?["objects_collected"]?.int == 1)
            #expect(objects?["chunks_collected"]?.int == 3)
            #expect(objects?["bytes_collected"]?.int == 6_000)
            #expect(objects?["objects"]?.int == 1)
            let metrics = try await cloud.request(
                .GET, "/metrics", authorized: false, headers: [("Authorization", "Bearer \(ObjectCloud.admin)")])
            let text = String(decoding: metrics.bytes, as: UTF8.self)
            #expect(text.contains("dally_cloud_object_gc_runs_total 2"))
            #expect(text.contains("dally_cloud_chunks_collected_total 3"))
            #expect(text.contains("dally_cloud_manifests_received_total 2"))
        }
    }
}
