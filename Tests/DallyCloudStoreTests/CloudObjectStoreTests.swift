import DallyCore
import DallyObjects
import DallySync
import DallyTestSupport
import Testing

@testable import DallyCloudStore

/// A table `(caption TEXT, image OBJECT)`, with or without `atomic_sync`.
func objectTable(_ name: String, atomic: Bool) -> TableSchema {
    let base = table(name, [("caption", .text), ("image", .object)])
    var policy = base.policy
    policy.atomicSync = atomic
    return TableSchema(name: name, columns: base.columns, conflict: .lastWriterWins, policy: policy)
}

/// An object's chunks and manifest, made from `seed`.
struct ChunkedObject {
    let chunks: [[UInt8]]
    let manifest: ObjectManifest
    var hash: ContentHash { manifest.hash }
    var reference: JSONValue { manifest.reference.json }

    init(seed: UInt8, sizes: [Int] = [700, 500, 300]) throws {
        var chunks: [[UInt8]] = []
        for (i, size) in sizes.enumerated() {
            chunks.append((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 7 &+ i) })
        }
        try self.init(chunks: chunks)
    }

    init(chunks: [[UInt8]]) throws {
        self.chunks = chunks
        let whole = chunks.flatMap { $0 }
        self.manifest = try ObjectManifest(
            hash: ContentHash.of(whole), size: Int64(whole.count),
            chunks: chunks.map { ChunkEntry(hash: ContentHash.of($0), size: $0.count) })
    }

    /// Stores every chunk at `now`.
    func putChunks(_ store: some CloudStore, now: Int64) async throws {
        for chunk in chunks { _ = try await store.chunks.put(ContentHash.of(chunk), bytes: chunk, now: now) }
    }
}

@Suite("Cloud store: objects, atomic sync, collection")
struct CloudObjectStoreTests {
    static let photos = objectTable("photos", atomic: true)
    static let files = objectTable("files", atomic: false)
    static let tables = [photos, files, notes]

    static func open(_ backend: Backend) async throws -> any CloudStore {
        try await openCloud(backend, tables: tables)
    }

    @Test(arguments: Backend.allCases) func aManifestIsRecordedOnlyWithEveryChunkAndOnlyOnce(_ backend: Backend) async throws {
        let cloud = try await Self.open(backend)
        defer { try? cloud.close() }
        let object = try ChunkedObject(seed: 1)
        try await object.putChunks(cloud, now: 1_000)
        _ = try await cloud.chunks.put(ContentHash.of([9]), bytes: [9], now: 1_000)

        // One chunk short: nothing recorded, and the answer names it.
        let short = try ChunkedObject(seed: 2)
        try await ChunkedObject(chunks: Array(short.chunks.prefix(2))).putChunks(cloud, now: 1_000)
        #expect(try await cloud.storeObject(short.manifest, now: 1_000) == .missing([ContentHash.of(short.chunks[2])]))
        #expect(try await cloud.manifest(of: short.hash) == nil)

        #expect(try await cloud.storeObject(object.manifest, now: 1_000) == .stored)
        #expect(try await cloud.storeObject(object.manifest, now: 2_000) == .alreadyStored)
        #expect(try await cloud.manifest(of: object.hash) == object.manifest)
        #expect(try await cloud.completeObjects([short.hash, object.hash]) == [object.hash])
        #expect(try await cloud.statistics().objects == 1)
        #expect(try await cloud.chunks.totals().chunks == 6)
        try cloud.close()
    }

    @Test(arguments: Backend.allCases) func objectsAndChunksOutliveARestart(_ backend: Backend) async throws {
        let place = try await CloudPlace(backend)
        let object = try ChunkedObject(seed: 3)
        let first = try await place.open(tables: Self.tables)
        try await object.putChunks(first, now: 1_000)
        #expect(try await first.storeObject(object.manifest, now: 1_000) == .stored)
        try first.close()

        let second = try await place.open(tables: Self.tables)
        #expect(try await second.manifest(of: object.hash) == object.manifest)
        #expect(try await second.chunks.get(ContentHash.of(object.chunks[1])) == object.chunks[1])
        try second.close()
    }

    @Test(arguments: Backend.allCases) func anAtomicRowWaitsForItsObjectWhileTheRestOfTheBatchApplies(_ backend: Backend) async throws {
        let cloud = try await Self.open(backend)
        defer { try? cloud.close() }
        let held = try ChunkedObject(seed: 4)
        let absent = try ChunkedObject(seed: 5)
        try await held.putChunks(cloud, now: 1_000)
        #expect(try await cloud.storeObject(held.manifest, now: 1_000) == .stored)

        let answer = try await cloud.send(
            cloudBatch(
                "b1",
                [
                    cloudSection(
                        "photos", ["caption", "image"],
                        [cloudPut("p1", ["held", held.reference]), cloudPut("p2", ["absent", absent.reference]),
                         cloudPut("p3", ["none", nil])]),
                    // Without atomic_sync the row goes in; its object follows on its own.
                    cloudSection("files", ["caption", "image"], [cloudPut("f1", ["later", absent.reference])]),
                ]))
        let rows = answer.allRows
        #expect(rows.count == 4)
        #expect(rows[0] == .accepted(id: "p1", version: 1))
        guard case .rejected(let id, let rejection) = rows[1] else {
            Issue.record("p2 was not refused: \(rows[1])")
            return
        }
        #expect(id == "p2")
        #expect(rejection.code == DallyError.Code.unknownObject.rawValue)
        #expect(rejection.field == "image")
        #expect(rejection.message.contains(absent.hash.hex))
        #expect(rows[2] == .accepted(id: "p3", version: 2))
        #expect(rows[3] == .accepted(id: "f1", version: 1))

        // Once the object is up, the same row applies.
        try await absent.putChunks(cloud, now: 2_000)
        #expect(try await cloud.storeObject(absent.manifest, now: 2_000) == .stored)
        let again = try await cloud.send(
            cloudBatch("b2", [cloudSection("photos", ["caption", "image"], [cloudPut("p2", ["absent", absent.reference])])]))
        #expect(again.allRows == [.accepted(id: "p2", version: 3)])

        // References go down as JSON objects, as they came up.
        let page = try await cloud.changes(table: "photos", since: 0, limit: 10, excludingReplica: nil)
        #expect(page.rows.map(\.values) == [["held", held.reference], ["none", nil], ["absent", absent.reference]])
        try cloud.close()
    }

    @Test(arguments: Backend.allCases) func objectValuesAreCheckedAndOldStringsStillAccepted(_ backend: Backend) async throws {
        let cloud = try await Self.open(backend)
        defer { try? cloud.close() }
        let object = try ChunkedObject(seed: 6)
        let answer = try await cloud.send(
            cloudBatch(
                "b1",
                [
                    cloudSection(
                        "files", ["caption", "image"],
                        [
                            cloudPut("old", ["a string", "blob-ref-from-before"]),
                            cloudPut("bad", ["no hash", .object([JSONMember("size", .int(3))])]),
                            cloudPut("num", ["a number", 12]),
                            // Uppercase hex and members in another order come back canonical.
                            cloudPut(
                                "ok",
                                [
                                    "ref",
                                    .object([
                                        JSONMember("chunks", .int(3)), JSONMember("size", .int(object.manifest.size)),
                                        JSONMember("hash", .string(object.hash.hex.uppercased())),
                                    ]),
                                ]),
                        ])
                ]))
        let rows = answer.allRows
        #expect(rows[0] == .accepted(id: "old", version: 1))
        for row in rows[1...2] {
            guard case .rejected(_, let rejection) = row else {
                Issue.record("not refused: \(row)")
                continue
            }
            #expect(rejection.code == "wrong_type")
            #expect(rejection.field == "image")
        }
        #expect(rows[3] == .accepted(id: "ok", version: 2))
        let page = try await cloud.changes(table: "files", since: 0, limit: 10, excludingReplica: nil)
        #expect(page.rows.map { $0.values[1] } == [.string("blob-ref-from-before"), object.reference])
        try cloud.close()
    }

    @Test(arguments: Backend.allCases) func collectionRemovesWhatNoRowNeedsOnceItIsOlderThanTheGrace(_ backend: Backend) async throws {
        let cloud = try await Self.open(backend)
        defer { try? cloud.close() }
        let referenced = try ChunkedObject(seed: 10)
        let orphan = try ChunkedObject(seed: 11)
        let young = try ChunkedObject(seed: 12)
        let deletedRow = try ChunkedObject(seed: 13)
        let oldString = try ChunkedObject(seed: 14)
        // Shares its first chunk with the orphan: that chunk must stay.
        let sharing = try ChunkedObject(chunks: [orphan.chunks[0], [1, 2, 3]])
        for object in [referenced, orphan, deletedRow, oldString, sharing] {
            try await object.putChunks(cloud, now: 1_000)
            #expect(try await cloud.storeObject(object.manifest, now: 1_000) == .stored)
        }
        try await young.putChunks(cloud, now: 9_000)
        #expect(try await cloud.storeObject(young.manifest, now: 9_000) == .stored)
        // Chunks of uploads whose manifest has not come: one old, one young.
        _ = try await cloud.chunks.put(ContentHash.of([7, 7]), bytes: [7, 7], now: 1_000)
        _ = try await cloud.chunks.put(ContentHash.of([8, 8]), bytes: [8, 8], now: 9_000)

        _ = try await cloud.send(
            cloudBatch(
                "b1",
                [
                    cloudSection(
                        "photos", ["caption", "image"],
                        [cloudPut("p1", ["kept", referenced.reference]), cloudPut("p2", ["gone", deletedRow.reference])]),
                    cloudSection(
                        "files", ["caption", "image"],
                        [cloudPut("f1", ["text", .string(oldString.manifest.reference.jsonText)]),
                         cloudPut("f2", ["shares", sharing.reference])]),
                ]))
        _ = try await cloud.send(cloudBatch("b2", [cloudSection("photos", [], [cloudDelete("p2", base: 2)])]))

        // Before anything is old enough, nothing goes.
        #expect(try await cloud.collectObjects(before: 1_000) == ObjectCollection())

        let collection = try await cloud.collectObjects(before: 5_000)
        #expect(collection.objects == 2)  // orphan, deletedRow
        #expect(try await cloud.completeObjects([referenced, orphan, young, deletedRow, oldString, sharing].map(\.hash))
                == [referenced.hash, young.hash, oldString.hash, sharing.hash])
        let swept = orphan.chunks[1...] + deletedRow.chunks + [[7, 7]]
        #expect(collection.chunks == swept.count)
        #expect(collection.chunkBytes == Int64(swept.reduce(0) { $0 + $1.count }))
        for object in [referenced, young, oldString, sharing] {
            let hashes = object.chunks.map { ContentHash.of($0) }
            #expect(try await cloud.chunks.present(hashes) == Set(hashes))
        }
        #expect(try await cloud.chunks.present([ContentHash.of([8, 8]), ContentHash.of([7, 7])]) == [ContentHash.of([8, 8])])
        #expect(try await cloud.collectObjects(before: 5_000) == ObjectCollection())
        try cloud.close()
    }

    @Test(arguments: Backend.allCases) func aTableWithoutObjectColumnsCollectsEveryOldObject(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend, tables: [notes])
        let object = try ChunkedObject(seed: 20)
        try await object.putChunks(cloud, now: 1_000)
        #expect(try await cloud.storeObject(object.manifest, now: 1_000) == .stored)
        #expect(try await cloud.collectObjects(before: 2_000) == ObjectCollection(objects: 1, chunks: 3, chunkBytes: 1_500))
        try cloud.close()
    }
}
