import DallyCore
import DallyObjects
import DallyStore
import Foundation
import Synchronization
import Testing

/// Objects between two real gateways and a real cloud: streamed in, chunked, sent as only the
/// chunks the cloud lacks, resumed after a drop, held for atomic rows, fetched on demand, and
/// kept off networks their policy forbids.
@Suite(.serialized) struct ObjectSyncEndToEndTests {
    static let mib = 1 << 20

    /// Puts an object into `table/row` on gateway A and checks the row's reference.
    static func put(_ system: ObjectSystem, _ table: String, _ row: String, _ column: String, _ object: TestObject)
        async throws
    {
        let reply = try await system.putObject("gw-a", table: table, row: row, column: column, object)
        #expect((200...201).contains(reply.status), "\(reply.body)")
        let reference = reply.json["values"]?[column]
        #expect(reference?["size"]?.int == Int64(object.size))
        #expect(reference?["hash"]?.string == object.digest.hash.hex)
    }

    @Test func aLargeObjectRoundTripsByteExactWithBoundedMemory() async throws {
        try await ObjectSystem.run { system in
            let object = TestObject(size: 200 * Self.mib, seed: 1)
            let expected = object.digest
            let sampler = ResidentMemorySampler()
            let baseline = ResidentMemorySampler.resident()
            let sampling = Task { await sampler.run() }
            defer { sampling.cancel() }

            try await Self.put(system, "photos", "p1", "image", object)
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 1)
            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            let read = try await system.readObject("gw-b", table: "photos", row: "p1", column: "image")
            #expect(read.status == 200, "\(read.body)")
            #expect(read.digest == expected)
            sampling.cancel()
            // Two gateways and a cloud each streamed 200 MB through: none held it whole.
            let growth = sampler.peak - baseline
            #expect(growth < 150 * Int64(Self.mib), "resident memory grew by \(growth / Int64(Self.mib)) MiB")
        }
    }

    @Test func aOneMegabyteEditInTheMiddleSendsOnlyAFewChunks() async throws {
        try await ObjectSystem.run { system in
            let original = TestObject(size: 100 * Self.mib, seed: 2)
            try await Self.put(system, "photos", "p2", "image", original)
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            let sentBefore = try await system.syncCounter("gw-a", "object_chunk_bytes_sent")
            let chunksBefore = try await system.syncCounter("gw-a", "object_chunks_sent")
            #expect(sentBefore >= Int64(original.size))

            var edited = original
            edited.edits = [(50 * Self.mib..<51 * Self.mib, 99)]
            try await Self.put(system, "photos", "p2", "image", edited)
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            let sent = try await system.syncCounter("gw-a", "object_chunk_bytes_sent") - sentBefore
            let chunks = try await system.syncCounter("gw-a", "object_chunks_sent") - chunksBefore
            // 256 KiB chunks on average: the edit's own and one or two either side of it.
            #expect(chunks >= 1 && chunks <= 12, "\(chunks) chunks sent for a 1 MB edit")
            #expect(sent < 4 * Int64(Self.mib), "\(sent) bytes sent for a 1 MB edit of 100 MB")
            // Bytes on the wire agree with the counters: only those chunks crossed.
            #expect(system.wifi.chunkUploads.count == Int(chunksBefore + chunks))

            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            let read = try await system.readObject("gw-b", table: "photos", row: "p2", column: "image")
            #expect(read.digest == edited.digest)
        }
    }

    @Test("chunks and manifests go with only the headers the cloud reads; the cloud's answers name no server")
    func objectRequestsCarryLeanHeads() async throws {
        try await ObjectSystem.run { system in
            let object = TestObject(size: 3 * Self.mib, seed: 12)
            try await Self.put(system, "photos", "p12", "image", object)
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 1)
            let exchanges = system.wifi.exchanges
            let chunks = exchanges.filter { $0.method == "PUT" && $0.path.hasPrefix("/v1/chunks/") }
            let manifests = exchanges.filter { $0.method == "PUT" && $0.path.hasPrefix("/v1/objects/") }
            let batches = exchanges.filter { $0.path == "/v1/batches" }
            #expect(chunks.count >= 2 && manifests.count == 1 && !batches.isEmpty)
            for chunk in chunks {
                // A whole chunk from its first byte: its length says it is framed, and nothing
                // else the cloud would take by default goes.
                #expect(chunk.headers.contains("dally-upload-length"))
                #expect(chunk.headers.isDisjoint(with: ["content-type", "dally-upload-offset", "accept-encoding"]), "\(chunk.headers)")
            }
            #expect(!manifests[0].headers.contains("accept-encoding"))
            // A batch's answer carries the changes that came down: it still asks them compressed.
            #expect(batches.allSatisfy { $0.headers.contains("accept-encoding") })
            #expect(exchanges.allSatisfy { !$0.answerHeaders.contains("server") })
            #expect(exchanges.contains { $0.answerHeaders.contains("date") }, "the gateway reads the cloud's clock from Date")

            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            #expect(try await system.readObject("gw-b", table: "photos", row: "p12", column: "image").digest == object.digest)
        }
    }

    @Test func aTransferCutHalfWayResumesWithoutResendingFinishedChunks() async throws {
        try await ObjectSystem.run { system in
            let object = TestObject(size: 24 * Self.mib, seed: 3)
            // (Set before the upload: the gateway's start-up wake may carry the object.)
            system.wifi.dropChunkUploads(after: 5)
            try await Self.put(system, "photos", "p3", "image", object)
            let cut = try await system.sync("gw-a", table: "photos")
            #expect(cut.status == 202, "\(cut.body)")
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 0)
            let before = system.wifi.chunkUploads
            #expect(before.count == 5)

            // The gateway restarts, and the link comes back.
            try await system.stopGateway("gw-a")
            try await system.startGateway("gw-a")
            system.wifi.dropChunkUploads(after: nil)
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 1)
            #expect(try await system.syncCounter("gw-a", "object_resumed_transfers") == 1)
            let all = system.wifi.chunkUploads
            #expect(Set(all).count == all.count, "a finished chunk was sent again")
            #expect(try await system.syncCounter("gw-a", "object_bytes_not_resent") > 0)
            // The restarted gateway asked only about the chunks after the five that went, and
            // perhaps one more: two go at once, and the one beside the dropped one may have
            // arrived out of order (asked about, found there, not sent again: the Set above).
            let asked = try await system.syncCounter("gw-a", "object_chunks_asked")
            let sentAfter = Int64(all.count - before.count)
            #expect(asked >= sentAfter && asked <= sentAfter + 1, "asked \(asked), sent \(sentAfter)")

            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            #expect(try await system.readObject("gw-b", table: "photos", row: "p3", column: "image").digest == object.digest)
        }
    }

    @Test func aChunkTheCloudLostAfterAnInterruptedWalkIsSentAgain() async throws {
        try await ObjectSystem.run { system in
            let object = TestObject(size: 6 * Self.mib, seed: 12)
            system.wifi.dropChunkUploads(after: 5)
            try await Self.put(system, "photos", "p6", "image", object)
            #expect(try await system.sync("gw-a", table: "photos").status == 202)
            let before = system.wifi.chunkUploads
            #expect(before.count == 5)
            // The cloud loses the first chunk that went (as its GC would, had the walk stayed
            // away longer than gc_grace): the resumed walk does not ask about it again, so the
            // manifest is refused and the walk goes round once more over every chunk.
            let cloudChunks = try SQLiteChunkStore.open(directory: system.base.root + "/cloud")
            let keep = Set(before.dropFirst().compactMap(ContentHash.init(hex:)))
            #expect(try await cloudChunks.sweep(storedBefore: .max, keeping: keep).chunks == 1)
            try cloudChunks.close()

            system.wifi.dropChunkUploads(after: nil)
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 1)
            let all = system.wifi.chunkUploads
            #expect(all.filter { $0 == before[0] }.count == 2)
            #expect(Set(all).count == all.count - 1, "only the lost chunk crossed twice")
            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            #expect(try await system.readObject("gw-b", table: "photos", row: "p6", column: "image").digest == object.digest)
        }
    }

    @Test func wifiOnlyObjectsNeverCrossTheCellularUplink() async throws {
        try await ObjectSystem.run { system in
            try await system.setUplink("gw-a", "wifi", "unavailable")
            let object = TestObject(size: 3 * Self.mib, seed: 4)
            try await Self.put(system, "photos", "p4", "image", object)
            // Rows may use cellular: the row goes, its object waits for wifi (so the sync-now
            // answers "queued").
            #expect(try await system.sync("gw-a", table: "photos").status == 202)
            #expect(system.lte.batches.contains { $0.uploads.contains("photos") })
            #expect(system.lte.objectExchanges.isEmpty)
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 0)
            let pending = try await system.stats("gw-a")["objects"]?["pending"]?["photos"]
            #expect(pending?["bytes"]?.int ?? 0 > 0)

            try await system.setUplink("gw-a", "wifi", "auto")
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 1)
            #expect(!system.wifi.chunkUploads.isEmpty)
            #expect(system.lte.objectExchanges.isEmpty)
        }
    }

    @Test func anAtomicRowNeverAppearsWithoutItsObject() async throws {
        try await ObjectSystem.run { system in
            let cover = TestObject(size: 6 * Self.mib, seed: 5)
            try await Self.put(system, "albums", "a1", "cover", cover)
            // The object cannot go: neither can its row.
            system.wifi.dropChunkUploads(after: 1)
            try await system.setUplink("gw-a", "lte", "unavailable")
            _ = try await system.sync("gw-a", table: "albums")
            #expect(!system.wifi.batches.contains { $0.uploads.contains("albums") })
            #expect(try await system.sync("gw-b", table: "albums").status == 200)
            #expect(try await system.call("gw-b", .GET, "/v1/tables/albums/rows/a1").status == 404)

            // Once it is up, the row follows in the same wake, and gateway B has both at once:
            // its object reads with B's only uplink down.
            system.wifi.dropChunkUploads(after: nil)
            #expect(try await system.sync("gw-a", table: "albums").status == 200)
            #expect(system.wifi.batches.contains { $0.uploads.contains("albums") })
            #expect(try await system.sync("gw-b", table: "albums").status == 200)
            try await system.setUplink("gw-b", "wifi", "unavailable")
            #expect(try await system.call("gw-b", .GET, "/v1/tables/albums/rows/a1").status == 200)
            let read = try await system.readObject("gw-b", table: "albums", row: "a1", column: "cover")
            #expect(read.status == 200, "\(read.body)")
            #expect(read.digest == cover.digest)
        }
    }

    @Test func aCoverRetakenBeforeItLeftIsSentOnceTheLastTime() async throws {
        try await ObjectSystem.run { system in
            // Let the start-up wake finish first, so that nothing leaves before the sync-nows.
            #expect(try await system.sync("gw-a", table: "albums").status == 200)
            // An atomic table: the row waits for its cover, so neither has left when the cover
            // is retaken; the first is cut off mid-walk, the second never starts.
            let first = TestObject(size: 3 * Self.mib, seed: 7)
            let second = TestObject(size: 3 * Self.mib, seed: 8)
            let third = TestObject(size: 3 * Self.mib, seed: 9)
            try await Self.put(system, "albums", "a2", "cover", first)
            system.wifi.dropChunkUploads(after: 2)
            try await system.setUplink("gw-a", "lte", "unavailable")
            #expect(try await system.sync("gw-a", table: "albums").status == 202)
            system.wifi.dropChunkUploads(after: nil)
            try await Self.put(system, "albums", "a2", "cover", second)
            try await Self.put(system, "albums", "a2", "cover", third)

            #expect(try await system.sync("gw-a", table: "albums").status == 200)
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 1)
            let manifests = system.wifi.exchanges.filter { $0.method == "PUT" && $0.path.hasPrefix("/v1/objects/") }
            #expect(manifests.map(\.path) == ["/v1/objects/\(third.digest.hash.hex)"])
            #expect(try await system.stats("gw-a")["objects"]?["pending"]?["albums"] == nil)

            #expect(try await system.sync("gw-b", table: "albums").status == 200)
            let read = try await system.readObject("gw-b", table: "albums", row: "a2", column: "cover")
            #expect(read.digest == third.digest)
        }
    }

    /// Starts a sync-now of photos on gateway A whose object walk stalls after its first chunk
    /// over wifi, writes `row` into `table` while it is stalled, lets `table`'s 1-minute
    /// deadline pass, and lets the walk go on; returns the sync-now's status.
    static func writeDuringAStalledWalk(
        _ system: ObjectSystem, object: TestObject, table: String, row: String, body: String
    ) async throws -> Int {
        #expect(try await system.sync("gw-a", table: "photos").status == 200)
        try await put(system, "photos", "p-\(object.seed)", "image", object)
        system.wifi.holdChunkUploads(after: 1)
        let walk = Task { try await system.sync("gw-a", table: "photos") }
        for _ in 0..<2_000 where system.wifi.heldChunkUploads == 0 { try await Task.sleep(for: .milliseconds(5)) }
        // (Two chunks go at once: the second may be held beside the first.)
        #expect(system.wifi.heldChunkUploads >= 1)
        let written = try await system.call("gw-a", .PUT, "/v1/tables/\(table)/rows/\(row)", body: body)
        #expect(written.status == 200 || written.status == 201, "\(written.body)")
        system.clockA.advance(by: .seconds(61))
        system.wifi.releaseChunkUploads()
        return try await walk.value.status
    }

    @Test func rowsThatFallDueDuringALongObjectWalkGoBetweenItsChunks() async throws {
        try await ObjectSystem.run { system in
            let object = TestObject(size: 3 * Self.mib, seed: 10)
            let status = try await Self.writeDuringAStalledWalk(
                system, object: object, table: "docs", row: "d1", body: #"{"values":{"title":"t"}}"#)
            #expect(status == 200)
            let exchanges = system.wifi.exchanges
            let docsBatch = exchanges.firstIndex { $0.uploads.contains("docs") }
            let manifest = exchanges.firstIndex { $0.method == "PUT" && $0.path == "/v1/objects/\(object.digest.hash.hex)" }
            #expect(docsBatch != nil && manifest != nil)
            if let docsBatch, let manifest { #expect(docsBatch < manifest, "the row waited for the whole walk") }
            #expect(try await system.syncCounter("gw-a", "object_walks_paused") == 0)
        }
    }

    @Test func rowsDueOnAnotherUplinkPauseTheWalkWhichThenResumes() async throws {
        try await ObjectSystem.run { system in
            let object = TestObject(size: 3 * Self.mib, seed: 11)
            let status = try await Self.writeDuringAStalledWalk(
                system, object: object, table: "readings", row: "r1", body: #"{"values":{"value":1.5}}"#)
            #expect(status == 200)
            // The reading went over lte while the photo was still on its way over wifi.
            let reading = system.lte.exchanges.contains { $0.uploads.contains("readings") }
            #expect(reading)
            #expect(try await system.syncCounter("gw-a", "object_walks_paused") == 1)
            #expect(try await system.syncCounter("gw-a", "object_resumed_transfers") == 1)
            #expect(try await system.syncCounter("gw-a", "objects_uploaded") == 1)
            #expect(system.lte.objectExchanges.isEmpty)
            // Resumed, not restarted: no chunk crossed twice. (The held PUT made the link look
            // slow, so later chunks may go as several frames each: count bytes, not PUTs.)
            #expect(try await system.syncCounter("gw-a", "object_chunk_bytes_sent") == Int64(object.size))
            #expect(try await system.syncCounter("gw-a", "object_chunk_bytes_on_wire") <= Int64(object.size))
            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            let read = try await system.readObject("gw-b", table: "photos", row: "p-11", column: "image")
            #expect(read.digest == object.digest)
        }
    }

    @Test func anOnDemandReadWaitsForTheFetchThenReturns() async throws {
        try await ObjectSystem.run { system in
            let file = TestObject(size: 5 * Self.mib, seed: 6)
            try await Self.put(system, "docs", "d1", "file", file)
            #expect(try await system.sync("gw-a", table: "docs").status == 200)
            #expect(try await system.sync("gw-b", table: "docs").status == 200)
            // The row is there, its object is not: on-demand objects come only when read.
            #expect(try await system.call("gw-b", .GET, "/v1/tables/docs/rows/d1").status == 200)
            #expect(try await system.syncCounter("gw-b", "objects_fetched") == 0)

            // With no network its policy allows, the read fails clearly.
            try await system.setUplink("gw-b", "wifi", "unavailable")
            let refused = try await system.readObject("gw-b", table: "docs", row: "d1", column: "file")
            #expect(refused.status == 503)
            #expect(refused.body.contains("object_unavailable"))

            try await system.setUplink("gw-b", "wifi", "auto")
            let read = try await system.readObject("gw-b", table: "docs", row: "d1", column: "file")
            #expect(read.status == 200, "\(read.body)")
            #expect(read.digest == file.digest)
            #expect(try await system.syncCounter("gw-b", "object_on_demand_fetches") == 1)
            #expect(try await system.syncCounter("gw-b", "object_fetch_failures") == 1)
            #expect(try await system.syncCounter("gw-b", "objects_fetched") == 1)
        }
    }
}

/// Samples this process's resident memory until cancelled, keeping the peak.
final class ResidentMemorySampler: Sendable {
    private let peakBytes = Mutex<Int64>(0)

    var peak: Int64 { peakBytes.withLock { $0 } }

    func run() async {
        while !Task.isCancelled {
            let now = Self.resident()
            peakBytes.withLock { $0 = max($0, now) }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// VmRSS from /proc/self/status, in bytes (0 where there is no /proc).
    static func resident() -> Int64 {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").compactMap { Int64($0) }.first ?? 0
            return kilobytes * 1024
        }
        return 0
    }
}
