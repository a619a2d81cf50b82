import DallyCore
import DallyObjects
import DallySync
import Testing

@testable import DallyStore

/// A table with an OBJECT column; `localOnly` and `onDemand` set its object policies.
func photosTable(_ name: String = "photos", localOnly: Bool = false, onDemand: Bool = false) -> TableSchema {
    let upload = UploadPolicy(maxDelay: .seconds(60), networks: ["wifi"])
    let download = DownloadPolicy(period: .seconds(60), networks: ["wifi"])
    return TableSchema(
        name: name, columns: [Column(name: "title", type: .text), Column(name: "image", type: .object)],
        conflict: .lastWriterWins,
        policy: SyncPolicy(
            localOnly: localOnly, atomicSync: false, uploadRows: upload, uploadObjects: upload, downloadRows: download,
            downloadObjects: DownloadPolicy(period: .seconds(60), networks: ["wifi"], onDemand: onDemand)))
}

/// A one-chunk object of `bytes`.
func oneChunkObject(_ bytes: [UInt8]) throws -> ObjectManifest {
    let hash = ContentHash.of(bytes)
    return try ObjectManifest(hash: hash, size: Int64(bytes.count), chunks: [ChunkEntry(hash: hash, size: bytes.count)])
}

/// What a client sends to name an uploaded object.
func requested(_ hash: ContentHash) -> Value { .json(#"{"hash":"\#(hash.hex)"}"#) }

@Suite("Replica objects: references, refs and queues")
struct ReplicaObjectTests {
    let clock = FixedClock(1_000_000)
    let store: ReplicaStore
    let a: ObjectManifest
    let b: ObjectManifest

    init() throws {
        let clock = self.clock
        store = try ReplicaStore.open(
            directory: temporaryDirectory(),
            tables: [photosTable(), photosTable("drafts", localOnly: true), photosTable("gallery", onDemand: true), notes],
            now: { clock.now })
        a = try oneChunkObject(Array("alpha".utf8))
        b = try oneChunkObject(Array("bravo".utf8))
    }

    private func refs(_ id: String, in table: String = "photos") async throws -> [ContentHash] {
        try await store.objectRefs(table: table, id: id).map(\.hash)
    }

    @Test func aRowWriteNamingAnUploadedObjectStoresItsFullReference() async throws {
        try await store.recordLocalObject(a)
        let row = try await store.write(put("p1", [(0, .text("cat")), (1, requested(a.hash))]), table: "photos")
        #expect(row.values[1] == .json(a.reference.jsonText))
        #expect(try await store.row(table: "photos", id: "p1")?.values[1] == .json(a.reference.jsonText))
        #expect(a.reference.jsonText == #"{"hash":"\#(a.hash.hex)","size":5,"chunks":1}"#)
    }

    @Test func refsFollowTheRowThroughPutPatchAndDelete() async throws {
        try await store.recordLocalObject(a)
        try await store.recordLocalObject(b)
        _ = try await store.write(put("p1", [(1, requested(a.hash))]), table: "photos")
        #expect(try await refs("p1") == [a.hash])

        let titled = try await store.write(patch("p1", [(0, .text("cat"))]), table: "photos")
        #expect(titled.values[1] == .json(a.reference.jsonText))
        #expect(try await refs("p1") == [a.hash])

        _ = try await store.write(patch("p1", [(1, requested(b.hash))]), table: "photos")
        #expect(try await refs("p1") == [b.hash])

        _ = try await store.write(patch("p1", [(1, .null)]), table: "photos")
        #expect(try await refs("p1") == [])

        _ = try await store.write(put("p1", [(1, requested(a.hash))]), table: "photos")
        _ = try await store.write(delete("p1"), table: "photos")
        #expect(try await refs("p1") == [])
    }

    @Test func anObjectIsQueuedForUploadOnceUnderTheFirstTableAndTime() async throws {
        try await store.recordLocalObject(a)
        _ = try await store.write(put("p1", [(1, requested(a.hash))]), table: "photos")
        clock.advance(5_000)
        _ = try await store.write(put("p2", [(1, requested(a.hash))]), table: "photos")
        _ = try await store.write(patch("p1", [(0, .text("again"))]), table: "photos")
        #expect(
            try await store.objectUploads()
                == [ObjectUpload(hash: a.hash, table: "photos", firstDirtyAt: 1_000_000, size: 5, bytesSent: 0, attempts: 0)])
    }

    @Test func aReplacedObjectIsNotSentUnlessARowNamingItHasLeft() async throws {
        try await store.recordLocalObject(a)
        try await store.recordLocalObject(b)
        let c = try oneChunkObject(Array("charlie".utf8))
        try await store.recordLocalObject(c)
        func queued() async throws -> Set<ContentHash> { Set(try await store.objectUploads().map(\.hash)) }

        // Retaken before anything left: only the last photo goes.
        _ = try await store.write(put("p1", [(1, requested(a.hash))]), table: "photos")
        _ = try await store.write(patch("p1", [(1, requested(b.hash))]), table: "photos")
        #expect(try await queued() == [b.hash])

        // A batch carries p1 naming b: the cloud may keep that row, so b must still arrive
        // after p1 moves on to c.
        let batch = try await store.nextBatch(gateway: "gw", maxRows: 100)
        #expect(batch?.rows == 1)
        _ = try await store.write(patch("p1", [(1, requested(c.hash))]), table: "photos")
        #expect(try await queued() == [b.hash, c.hash])

        // A deleted row lets go of an object that never left, too, and a walk under way
        // learns of it at its next chunk.
        #expect(try await store.beginObjectUpload(c.hash))
        _ = try await store.write(delete("p1"), table: "photos")
        #expect(try await queued() == [b.hash])
        #expect(try await store.recordObjectBytesSent(c.hash, bytes: 7, chunksDone: 1) == false)
        #expect(try await store.beginObjectUpload(c.hash) == false)
        #expect(try await store.recordObjectBytesSent(b.hash, bytes: 5, chunksDone: 1))
        #expect(try await store.objectUploads(tables: ["photos"]).map(\.chunksDone) == [1])
    }

    @Test func aLocalOnlyTableQueuesNoUploadButKeepsRefs() async throws {
        try await store.recordLocalObject(a)
        _ = try await store.write(put("d1", [(1, requested(a.hash))]), table: "drafts")
        #expect(try await store.objectUploads().isEmpty)
        #expect(try await refs("d1", in: "drafts") == [a.hash])
    }

    @Test func anUnknownOrNotLocalObjectIsRefusedAndNothingChanges() async throws {
        // Known only by a downstream row's reference: not whole here, so not nameable.
        _ = try await store.applyChanges([galleryPage([galleryRow("g1", b)])])
        let seqBefore = store.lastSeq
        for hash in [a.hash, b.hash] {
            do {
                _ = try await store.write(put("p1", [(0, .text("x")), (1, requested(hash))]), table: "photos")
                Issue.record("an object not held was accepted")
            } catch let error as DallyError {
                #expect(error.code == .unknownObject)
                #expect(error.field == "image")
                #expect(error.message.contains(hash.hex))
                #expect(error.message.contains("POST /v1/objects"))
            }
        }
        #expect(store.lastSeq == seqBefore)
        #expect(try await store.row(table: "photos", id: "p1") == nil)
        #expect(try await store.outboxEntries(table: "photos").isEmpty)
        #expect(try await store.objectUploads().isEmpty)
        #expect(try await refs("p1") == [])
    }

    @Test func aBatchRefusesOnlyTheRowNamingAnUnknownObject() async throws {
        try await store.recordLocalObject(a)
        let outcome = try await store.writeBatch(
            [put("p1", [(1, requested(a.hash))]), put("p2", [(1, requested(b.hash))])], table: "photos",
            allOrNothing: false)
        #expect(outcome.saved == ["p1"])
        #expect(outcome.errors.map(\.error.code) == [.unknownObject])
        #expect(try await refs("p2") == [])
    }

    @Test func writeObjectPatchesAnExistingRowOrCreatesOne() async throws {
        _ = try await store.write(put("p1", [(0, .text("cat"))]), table: "photos")
        let patched = try await store.writeObject(a, table: "photos", id: "p1", column: "image", expectedSeq: nil)
        #expect(!patched.created)
        #expect(patched.row.values == [.text("cat"), .json(a.reference.jsonText)])
        let created = try await store.writeObject(b, table: "photos", id: "p2", column: "image", expectedSeq: 0)
        #expect(created.created)
        #expect(created.row.values == [.null, .json(b.reference.jsonText)])
        #expect(try await store.object(a.hash)?.servable == a)
        #expect(try await store.objectUploads().map(\.hash).sorted() == [a.hash, b.hash].sorted())
    }

    @Test func aRefusedObjectWriteRecordsNotEvenTheObject() async throws {
        _ = try await store.write(put("p1", [(0, .text("cat"))]), table: "photos")
        await #expect(throws: DallyError.self) {
            try await store.writeObject(a, table: "photos", id: "p1", column: "image", expectedSeq: 7)
        }
        await #expect(throws: DallyError.self) {
            try await store.writeObject(a, table: "photos", id: "p1", column: "title", expectedSeq: nil)
        }
        #expect(try await store.object(a.hash) == nil)
        #expect(store.lastSeq == 1)
    }

    // MARK: Downstream

    private func galleryRow(_ id: String, _ object: ObjectManifest?, version: Int64 = 1, deleted: Bool = false)
        -> ChangePage.ChangedRow
    {
        ChangePage.ChangedRow(
            id: id, version: version, updatedAt: 5, deleted: deleted,
            values: deleted ? [] : ["t", object.map { .string($0.reference.jsonText) } ?? .null])
    }

    private func galleryPage(_ rows: [ChangePage.ChangedRow], table: String = "gallery") -> ChangePage {
        ChangePage(table: table, columns: ["title", "image"], since: 0, version: 9, more: false, rows: rows)
    }

    @Test func aDownstreamRowRecordsItsObjectAsInTheCloudAndKeepsRefs() async throws {
        _ = try await store.applyChanges([galleryPage([galleryRow("g1", a)])])
        let record = try await store.object(a.hash)
        #expect(record?.reference == a.reference)
        #expect(record?.local == false)
        #expect(record?.inCloud == true)
        #expect(record?.manifest == nil)
        #expect(try await refs("g1", in: "gallery") == [a.hash])
        #expect(try await store.row(table: "gallery", id: "g1")?.values[1] == .json(a.reference.jsonText))
        // On-demand table: nothing queued.
        #expect(try await store.objectDownloads().isEmpty)

        _ = try await store.applyChanges([galleryPage([galleryRow("g1", b, version: 2)])])
        #expect(try await refs("g1", in: "gallery") == [b.hash])
        _ = try await store.applyChanges([galleryPage([galleryRow("g1", nil, version: 3, deleted: true)])])
        #expect(try await refs("g1", in: "gallery") == [])
    }

    @Test func aScheduledTableQueuesTheDownloadOfObjectsNotHereOnce() async throws {
        try await store.recordLocalObject(b)
        clock.advance(1)
        _ = try await store.applyChanges([galleryPage([galleryRow("p1", a), galleryRow("p2", b)], table: "photos")])
        clock.advance(1)
        _ = try await store.applyChanges([galleryPage([galleryRow("p3", a, version: 2)], table: "photos")])
        #expect(try await store.objectDownloads() == [ObjectDownload(hash: a.hash, table: "photos", queuedAt: 1_000_001)])
        // Downstream rows are clean: nothing to upload.
        #expect(try await store.objectUploads().isEmpty)

        // Fetched: local, and no longer waiting.
        try await store.recordLocalObject(a)
        #expect(try await store.objectDownloads().isEmpty)
        let record = try await store.object(a.hash)
        #expect(record?.local == true)
        #expect(record?.inCloud == true)
        #expect(record?.servable == a)
    }

    @Test func aDownloadIsDroppedWhenNoRowReferencesItsObjectAnyMore() async throws {
        let c = try oneChunkObject(Array("charlie".utf8))
        _ = try await store.applyChanges([
            galleryPage([galleryRow("p1", a), galleryRow("p2", c), galleryRow("p3", c)], table: "photos")
        ])
        #expect(Set(try await store.objectDownloads().map(\.hash)) == [a.hash, c.hash])

        // p1's photo replaced, p2's deleted, before either was fetched: a is wanted by no row,
        // c still by p3; b comes in its place.
        _ = try await store.applyChanges([
            galleryPage(
                [galleryRow("p1", b, version: 2), galleryRow("p2", nil, version: 2, deleted: true)], table: "photos")
        ])
        #expect(Set(try await store.objectDownloads().map(\.hash)) == [b.hash, c.hash])

        // A local write naming an object held here drops the last reference to c as well.
        try await store.recordLocalObject(a)
        _ = try await store.write(put("p3", [(1, requested(a.hash))]), table: "photos")
        #expect(try await store.objectDownloads().map(\.hash) == [b.hash])
    }
}

@Suite("Replica objects: GC")
struct ObjectCollectorTests {
    let clock = FixedClock(1_000_000)
    let store: ReplicaStore
    let chunks: SQLiteChunkStore
    let intakes = ObjectIntakes()
    let collector: ObjectCollector
    static let grace: Int64 = 3_600_000

    init() throws {
        let clock = self.clock
        let directory = temporaryDirectory()
        store = try ReplicaStore.open(directory: directory, tables: [photosTable()], now: { clock.now })
        chunks = try SQLiteChunkStore.open(directory: directory)
        collector = ObjectCollector(store: store, chunks: chunks, intakes: intakes, grace: .seconds(3600))
    }

    /// Stores an object's single chunk now and records the object.
    private func upload(_ text: String) async throws -> ObjectManifest {
        let manifest = try oneChunkObject(Array(text.utf8))
        _ = try await chunks.put(manifest.hash, bytes: Array(text.utf8), now: clock.now)
        try await store.recordLocalObject(manifest)
        return manifest
    }

    @Test func keepsReferencedQueuedAndYoungObjectsAndDeletesOldOrphansWithTheirChunks() async throws {
        let referenced = try await upload("referenced")
        let orphan = try await upload("orphan")
        let queued = try await upload("queued")
        let stray = Array("stray chunk".utf8)
        _ = try await chunks.put(.of(stray), bytes: stray, now: clock.now)
        _ = try await store.write(put("p1", [(1, requested(referenced.hash))]), table: "photos")
        // Named by a row that left in a batch, then no longer: no ref, but the upload stays.
        _ = try await store.write(put("p2", [(1, requested(queued.hash))]), table: "photos")
        _ = try await store.nextBatch(gateway: "gw", maxRows: 100)
        _ = try await store.write(patch("p2", [(1, .null)]), table: "photos")
        clock.advance(Self.grace)
        let young = try await upload("young")

        let report = try await collector.pass(now: clock.now + 1)
        #expect(report == ObjectCollector.Report(objects: 1, chunks: 2, chunkBytes: Int64("orphan".utf8.count + stray.count)))
        #expect(try await store.object(orphan.hash) == nil)
        for kept in [referenced, queued, young] { #expect(try await store.object(kept.hash) != nil) }
        let present = try await chunks.present([referenced, orphan, queued, young].map(\.hash) + [.of(stray)])
        #expect(present == Set([referenced.hash, queued.hash, young.hash]))

        // Nothing more to do on a second pass.
        #expect(try await collector.pass(now: clock.now + 1) == ObjectCollector.Report())
    }

    @Test func anOldOrphanUploadedAgainGetsAFreshGrace() async throws {
        let again = try await upload("again")
        clock.advance(2 * Self.grace)
        #expect(try await upload("again") == again)
        #expect(try await store.object(again.hash)?.createdAt == clock.now)
        #expect(try await collector.pass(now: clock.now + 1) == ObjectCollector.Report())
        #expect(try await store.object(again.hash)?.servable == again)
    }

    @Test func anOldChunkPutAgainOrUsedByAReceiveUnderWayIsKept() async throws {
        let reused = Array("reused".utf8)
        let inFlight = Array("in flight".utf8)
        _ = try await chunks.put(.of(reused), bytes: reused, now: clock.now)
        _ = try await chunks.put(.of(inFlight), bytes: inFlight, now: clock.now)
        let started = clock.now
        clock.advance(2 * Self.grace)
        // An upload that dedups against an old chunk refreshes it.
        #expect(try await chunks.put(.of(reused), bytes: reused, now: clock.now) == false)
        // A receive that began before the grace ran out keeps what it stored since.
        let report = try await intakes.receiving(startedAt: started) {
            try await collector.pass(now: clock.now)
        }
        #expect(report.chunks == 0)
        #expect(try await chunks.present([.of(reused), .of(inFlight)]).count == 2)
        // Once it is over (and recorded nothing), the chunk goes.
        #expect(try await collector.pass(now: clock.now).chunks == 1)
    }
}
