import DallySyncEngine
import DallyTestSupport
import DallyCore
import DallyGateway
import DallyObjects
import DallyStore
import DallySync
import Foundation
import Synchronization
import Testing

/// The object routes through real HTTP on 127.0.0.1: upload, read, ranges, validators,
/// deduplication, upload-then-name, on-demand fetch, GC, and memory that stays bounded.
@Suite("End to end: objects")
struct ObjectsEndToEndTests {
    static let path = "/v1/tables/photos/rows/p1/objects/image"

    @Test func anUploadedObjectIsReferencedByTheRowAndReadBackIdentically() async throws {
        let bytes = SeededBytes.bytes(100_000, seed: 1)
        let hash = ContentHash.of(bytes)
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            _ = try await gw.live.send(.PUT, "/v1/tables/photos/rows/p1", body: #"{"values":{"title":"cat"}}"#)
            let put = try await gw.send(.PUT, Self.path, bytes: bytes)
            #expect(put.status == 200, "\(String(decoding: put.bytes, as: UTF8.self))")
            let reference = try #require(put.json["values"]?["image"])
            #expect(reference["hash"]?.string == hash.hex)
            #expect(reference["size"]?.int == 100_000)
            let chunks = try #require(reference["chunks"]?.int)
            #expect(chunks > 1)
            #expect(put.json["values"]?["title"] == "cat")
            #expect(put.json["seq"]?.int == 2)
            #expect(put.header("ETag") == "\"2\"")
            #expect(try await gw.live.send(.GET, "/v1/tables/photos/rows/p1").json["values"]?["image"] == reference)

            let got = try await gw.send(.GET, Self.path)
            #expect(got.status == 200)
            #expect(got.bytes == bytes)
            #expect(got.header("Content-Type") == "application/octet-stream")
            #expect(got.header("Content-Length") == "100000")
            #expect(got.header("ETag") == "\"\(hash.hex)\"")
            #expect(got.header("Accept-Ranges") == "bytes")

            let head = try await gw.send(.HEAD, Self.path)
            #expect(head.status == 200)
            #expect(head.bytes.isEmpty)
            #expect(head.header("Content-Length") == "100000")
            #expect(head.header("ETag") == "\"\(hash.hex)\"")

            // A new row is created with its other columns null, and answered 201.
            let created = try await gw.send(.PUT, "/v1/tables/photos/rows/p2/objects/thumb", bytes: Array("tiny".utf8))
            #expect(created.status == 201)
            #expect(created.json["values"]?["title"] == .null)
            #expect(created.json["values"]?["image"] == .null)
            #expect(created.json["values"]?["thumb"]?["size"]?.int == 4)
            #expect(try await gw.send(.GET, "/v1/tables/photos/rows/p2/objects/thumb").bytes == Array("tiny".utf8))

            // The change feed saw both writes like any other.
            let changes = try await gw.live.send(.GET, "/v1/tables/photos/changes?since=0")
            #expect(changes.json["changes"]?.array?.map { $0["id"] } == ["p1", "p2"])
        }
    }

    @Test func anEmptyObjectIsAnObjectToo() async throws {
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            let put = try await gw.send(.PUT, Self.path, bytes: [])
            #expect(put.status == 201)
            #expect(put.json["values"]?["image"]?["hash"]?.string == ContentHash.of([UInt8]()).hex)
            #expect(put.json["values"]?["image"]?["chunks"]?.int == 0)
            let got = try await gw.send(.GET, Self.path)
            #expect(got.status == 200)
            #expect(got.bytes.isEmpty)
            #expect(try await gw.send(.GET, Self.path, headers: [("Range", "bytes=0-0")]).status == 416)
        }
    }

    @Test func rangesAreServedFromTheChunksThatHoldThem() async throws {
        let bytes = SeededBytes.bytes(50_000, seed: 2)
        let size = bytes.count
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            #expect(try await gw.send(.PUT, Self.path, bytes: bytes).status == 201)
            let manifest = try #require(try await gw.store.object(.of(bytes))?.manifest)
            #expect(manifest.chunks.count > 2)
            let boundary = Int(manifest.offsets[1])

            func range(_ header: String, _ expected: ClosedRange<Int>) async throws {
                let reply = try await gw.send(.GET, Self.path, headers: [("Range", header)])
                #expect(reply.status == 206, "\(header)")
                #expect(reply.bytes == Array(bytes[expected]), "\(header)")
                #expect(reply.header("Content-Range") == "bytes \(expected.lowerBound)-\(expected.upperBound)/\(size)")
                #expect(reply.header("Content-Length") == "\(expected.count)")
            }
            try await range("bytes=0-0", 0...0)
            try await range("bytes=\(boundary - 10)-\(boundary + 9)", (boundary - 10)...(boundary + 9))
            try await range("bytes=-100", (size - 100)...(size - 1))
            try await range("bytes=\(size - 10)-", (size - 10)...(size - 1))
            try await range("bytes=100-\(size * 2)", 100...(size - 1))

            let unsatisfiable = try await gw.send(.GET, Self.path, headers: [("Range", "bytes=\(size)-")])
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.errorCode == "range_not_satisfiable")
            #expect(unsatisfiable.header("Content-Range") == "bytes */\(size)")

            // If-Range naming another version: the whole object.
            let stale = try await gw.send(
                .GET, Self.path, headers: [("Range", "bytes=0-0"), ("If-Range", "\"\(String(repeating: "0", count: 64))\"")])
            #expect(stale.status == 200)
            #expect(stale.bytes.count == size)
            let current = try await gw.send(
                .GET, Self.path, headers: [("Range", "bytes=0-0"), ("If-Range", "\"\(manifest.hash.hex)\"")])
            #expect(current.status == 206)
        }
    }

    @Test func theETagIsTheContentHashAndIfNoneMatchAnswers304() async throws {
        let bytes = SeededBytes.bytes(10_000, seed: 3)
        let etag = "\"\(ContentHash.of(bytes).hex)\""
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            _ = try await gw.send(.PUT, Self.path, bytes: bytes)
            let cached = try await gw.send(.GET, Self.path, headers: [("If-None-Match", etag)])
            #expect(cached.status == 304)
            #expect(cached.bytes.isEmpty)
            #expect(cached.header("ETag") == etag)
            #expect(try await gw.send(.GET, Self.path, headers: [("If-None-Match", "\"other\", W/\(etag)")]).status == 304)
            #expect(try await gw.send(.GET, Self.path, headers: [("If-None-Match", "\"other\"")]).status == 200)
        }
    }

    @Test func identicalBytesAreStoredOnceAndTheStatsSaySo() async throws {
        let bytes = SeededBytes.bytes(60_000, seed: 4)
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            let first = try await gw.send(.PUT, Self.path, bytes: bytes)
            let chunks = try #require(first.json["values"]?["image"]?["chunks"]?.int)
            let before = try #require(try await gw.stats()["objects"])
            #expect(before["chunks"]?.int == chunks)
            #expect(before["chunk_bytes"]?.int == 60_000)

            let second = try await gw.send(.PUT, "/v1/tables/photos/rows/p2/objects/thumb", bytes: bytes)
            #expect(second.json["values"]?["thumb"] == first.json["values"]?["image"])
            let objects = try #require(try await gw.stats()["objects"])
            #expect(objects["objects"]?.int == 1)
            #expect(objects["local_objects"]?.int == 1)
            #expect(objects["chunks"]?.int == chunks)
            #expect(objects["chunk_bytes"]?.int == 60_000)
            #expect(objects["uploads_received"]?.int == 2)
            #expect(objects["chunks_deduplicated"]?.int == chunks)
            #expect(objects["bytes_saved_by_dedup"]?.int == 60_000)
            #expect(objects["receiving"]?.int == 0)
        }
    }

    @Test func anObjectUploadedFirstIsCommittedWithTheRowThatNamesIt() async throws {
        let bytes = SeededBytes.bytes(20_000, seed: 5)
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            let posted = try await gw.send(.POST, "/v1/objects", bytes: bytes)
            #expect(posted.status == 201)
            let hash = try #require(posted.json["hash"]?.string)
            #expect(hash == ContentHash.of(bytes).hex)
            #expect(posted.json["size"]?.int == 20_000)
            #expect(try await gw.stats()["store"]?["last_seq"]?.int == 0)

            // Named by hash alone (in either case); size and chunks are the gateway's.
            let put = try await gw.live.send(
                .PUT, "/v1/tables/photos/rows/p1",
                body: #"{"values":{"title":"dog","image":{"hash":"\#(hash.uppercased())","size":1}}}"#)
            #expect(put.status == 200, "\(put.body)")
            #expect(put.json["values"]?["image"] == posted.json)
            #expect(try await gw.send(.GET, Self.path).bytes == bytes)

            // And in a batch, one object for two rows and two columns.
            let batch = try await gw.live.send(
                .POST, "/v1/tables/photos/batch",
                body: #"{"created":[{"id":"b1","values":{"image":{"hash":"\#(hash)"},"thumb":{"hash":"\#(hash)"}}},{"id":"b2","values":{"thumb":{"hash":"\#(hash)"}}}]}"#)
            #expect(batch.json["saved"] == ["b1", "b2"])
            #expect(try await gw.store.objectRefs(table: "photos", id: "b1").map(\.column) == ["image", "thumb"])
            #expect(try await gw.store.objectUploads().map(\.hash.hex) == [hash])
        }
    }

    @Test func unreferencedUploadsAreCollectedAfterTheGraceAndCannotBeNamedThen() async throws {
        let kept = SeededBytes.bytes(9_000, seed: 6)
        let dropped = SeededBytes.bytes(9_000, seed: 7)
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            _ = try await gw.send(.PUT, Self.path, bytes: kept)
            let orphan = try await gw.send(.POST, "/v1/objects", bytes: dropped)
            let hash = try #require(orphan.json["hash"]?.string)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(try await gw.objects.collect(now: now).objects == 0)

            let report = try await gw.objects.collect(now: now + 3_600_000 + 60_000)
            #expect(report.objects == 1)
            #expect(report.chunks > 0)
            let stats = try #require(try await gw.stats()["objects"])
            #expect(stats["gc_objects_collected"]?.int == 1)
            #expect(stats["gc_chunks_collected"]?.int == Int64(report.chunks))
            #expect(stats["chunk_bytes"]?.int == 9_000)

            let named = try await gw.live.send(
                .PUT, "/v1/tables/photos/rows/p2", body: #"{"values":{"image":{"hash":"\#(hash)"}}}"#)
            #expect(named.errorCode == "unknown_object")
            #expect(try await gw.send(.GET, Self.path).bytes == kept)
        }
    }

    @Test func aClientThatDisconnectsMidUploadLeavesNoObjectAndNoRowChange() async throws {
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            _ = try await gw.live.send(.PUT, "/v1/tables/photos/rows/p1", body: #"{"values":{"title":"cat"}}"#)
            for (n, announce) in [true, false].enumerated() {
                await #expect(throws: (any Error).self) {
                    _ = try await gw.stream(.PUT, Self.path, seed: 8, length: 500_000, announce: announce, failAfter: 200_000)
                }
                // The server has given up on it once it has answered it (to nobody).
                #expect(try await gw.answered(.PUT, route: "/v1/tables/{table}/rows/{id}/objects/{column}", status: 400, count: n + 1))
            }
            let objects = try #require(try await gw.stats()["objects"])
            #expect(objects["objects"]?.int == 0)
            #expect(objects["uploads_received"]?.int == 0)
            let row = try await gw.live.send(.GET, "/v1/tables/photos/rows/p1")
            #expect(row.json["seq"]?.int == 1)
            #expect(row.json["values"]?["image"] == .null)
            // And the gateway goes on serving uploads.
            #expect(try await gw.send(.PUT, Self.path, bytes: [1, 2, 3]).status == 200)
        }
    }

    // MARK: Objects not on this gateway

    /// A downstream row of `photos` whose image the gateway has not fetched.
    private func downstreamRow(_ gw: ObjectGateway, _ bytes: [UInt8]) async throws -> ObjectReference {
        let reference = ObjectReference(hash: .of(bytes), size: Int64(bytes.count), chunks: 1)
        let page = ChangePage(
            table: "photos", columns: ["title", "image"], since: 0, version: 1, more: false,
            rows: [ChangePage.ChangedRow(id: "p1", version: 1, updatedAt: 5, deleted: false, values: ["far", .string(reference.jsonText)])])
        _ = try await gw.store.applyChanges([page])
        return reference
    }

    @Test func anObjectNotHereIsUnavailableWithoutAFetcher() async throws {
        try await ObjectGateway.run(ObjectGateway.config()) { gw in
            _ = try await downstreamRow(gw, Array("remote".utf8))
            let reply = try await gw.send(.GET, Self.path)
            #expect(reply.status == 503)
            #expect(reply.errorCode == "object_unavailable")
        }
    }

    @Test func anObjectNotHereIsFetchedThenServed() async throws {
        let bytes = Array("fetched from the cloud".utf8)
        let fetcher = FakeFetcher(bytes: bytes)
        try await ObjectGateway.run(ObjectGateway.config(), fetcher: fetcher) { gw in
            fetcher.attach(gw.objects, gw.store)
            let reference = try await downstreamRow(gw, bytes)
            let reply = try await gw.send(.GET, Self.path)
            #expect(reply.status == 200)
            #expect(reply.bytes == bytes)
            #expect(fetcher.fetched == [reference.hash])
            // Now local: served without fetching again.
            #expect(try await gw.send(.GET, Self.path).status == 200)
            #expect(fetcher.fetched.count == 1)
            #expect(try await gw.store.object(reference.hash)?.local == true)
        }
    }

    @Test func aFetchThatTimesOutIsAnswered504() async throws {
        let fetcher = FakeFetcher(bytes: nil)
        try await ObjectGateway.run(ObjectGateway.config(), fetcher: fetcher) { gw in
            _ = try await downstreamRow(gw, Array("never arrives".utf8))
            let reply = try await gw.send(.GET, Self.path)
            #expect(reply.status == 504)
            #expect(reply.errorCode == "object_fetch_timeout")
        }
    }

    // MARK: Memory

    /// The probe's object size: large enough that holding it anywhere dwarfs what streaming
    /// costs (a few chunks of up to 4 MiB, network buffers, the allocator's slack: 25–35 MiB
    /// measured, whatever the object's size).
    static let largeObjectSize = 128 << 20
    static let memoryProbe = "DALLY_OBJECT_MEMORY_PROBE"

    /// Runs ``largeObjectMemoryProbe()`` in a process of its own, so that no other test's
    /// allocations count against it, and checks what it measured.
    @Test func aLargeObjectStreamsInAndOutInBoundedMemory() async throws {
        if ProcessInfo.processInfo.environment[Self.memoryProbe] != nil {
            try await largeObjectMemoryProbe()
            return
        }
        let arguments = ["--testing-library", "swift-testing", "--filter", "aLargeObjectStreamsInAndOutInBoundedMemory"]
        let environment = ProcessInfo.processInfo.environment.merging([Self.memoryProbe: "1"]) { $1 }
        let (status, text) = try await offPool {
            try SpawnedProcess.output("/proc/self/exe", arguments, environment: environment)
        }
        #expect(status == 0, "the probe failed:\n\(text)")
        let line = text.split(separator: "\n").first { $0.hasPrefix("peak RSS growth: ") }
        guard let growth = line.flatMap({ Int64($0.dropFirst("peak RSS growth: ".count)) }) else {
            // No /proc/self/clear_refs here: the probe checked the bytes but could not measure.
            #expect(text.contains("peak RSS not measurable"), "\(text)")
            return
        }
        #expect(growth < Int64(Self.largeObjectSize / 2), "peak RSS grew by \(growth) bytes")
    }

    /// Uploads and reads back a large seeded object through HTTP, client and server both
    /// streaming, and prints how much the process's peak resident set grew meanwhile.
    func largeObjectMemoryProbe() async throws {
        let size = Self.largeObjectSize
        let expected: ContentHash = {
            var hash = StreamingHash()
            var generator = SeededBytes(seed: 9)
            var left = size
            while left > 0 {
                let piece = generator.bytes(Swift.min(left, 64 << 10))
                hash.update(piece)
                left -= piece.count
            }
            return hash.finalize()
        }()
        try await ObjectGateway.run(ObjectGateway.config(), chunking: .default) { gw in
            let canMeasure = resetPeakRSS()
            let baseline = peakRSS() ?? 0
            let put = try await gw.stream(.PUT, Self.path, seed: 9, length: size)
            #expect(put.status == 201)
            #expect(put.json["values"]?["image"]?["hash"]?.string == expected.hex)
            let got = try await gw.streamedDigest(Self.path)
            #expect(got.status == 200)
            #expect(got.size == Int64(size))
            #expect(got.hash == expected)
            if canMeasure, let peak = peakRSS() {
                print("peak RSS growth: \(peak - baseline)")
            } else {
                print("peak RSS not measurable")
            }
        }
    }
}

/// Stands in for the sync side's fetch: stores the object's bytes as one chunk and records
/// it, or times out when it has no bytes.
final class FakeFetcher: ObjectFetching {
    private struct State {
        var objects: GatewayObjects?
        var store: ReplicaStore?
        var fetched: [ContentHash] = []
    }

    private let bytes: [UInt8]?
    private let state = Mutex(State())

    init(bytes: [UInt8]?) { self.bytes = bytes }

    func attach(_ objects: GatewayObjects, _ store: ReplicaStore) {
        state.withLock {
            $0.objects = objects
            $0.store = store
        }
    }

    var fetched: [ContentHash] { state.withLock { $0.fetched } }

    func fetch(_ reference: ObjectReference, table: String) async throws(DallyError) {
        let (objects, store) = state.withLock { ($0.objects, $0.store) }
        guard let bytes, let objects, let store else {
            throw DallyError(.objectFetchTimeout, "the fetch did not finish within objects.fetch_timeout")
        }
        state.withLock { $0.fetched.append(reference.hash) }
        do {
            let manifest = try ObjectManifest(
                hash: .of(bytes), size: Int64(bytes.count), chunks: [ChunkEntry(hash: .of(bytes), size: bytes.count)])
            _ = try await objects.intakes.receiving(startedAt: 0) {
                _ = try await objects.chunkStore.put(manifest.hash, bytes: bytes, now: 0)
                try await store.recordLocalObject(manifest)
            }
        } catch {
            throw DallyError(.objectUnavailable, "\(error)")
        }
    }
}
