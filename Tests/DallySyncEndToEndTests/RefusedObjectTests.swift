import DallyCore
import Foundation
import GRDB
import Testing

/// An object larger than the cloud takes (`objects.max_bytes`, 100,000 bytes here) is set aside
/// with a record the app can see on each row naming it; the objects queued after it still go,
/// and settling the record once the cause is fixed sends the row's objects again.
@Suite struct RefusedObjectTests {
    static let cloudLimit = """
        [objects]
        max_bytes = 100000
        """

    @Test func anObjectTooLargeForTheCloudIsSetAsideAndTheOthersGo() async throws {
        try await ObjectSystem.run(cloudExtra: Self.cloudLimit) { system in
            // Queued first (oldest first), so that before it was set aside it held back the other.
            let big = TestObject(size: 150_000, seed: 31)
            let small = TestObject(size: 5_000, seed: 32)
            try await ObjectSyncEndToEndTests.put(system, "photos", "p1", "image", big)
            try await ObjectSyncEndToEndTests.put(system, "photos", "p2", "image", small)
            #expect(try await system.sync("gw-a", table: "photos").status == 200)

            // The small one is in the cloud: the other gateway reads it.
            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            let read = try await system.readObject("gw-b", table: "photos", row: "p2", column: "image")
            #expect(read.status == 200, "\(read.body)")
            #expect(read.digest == small.digest)

            // The big one is set aside, told on its row, and not sent again at the next sync.
            let stats = try await system.stats("gw-a")
            #expect(stats["objects"]?["refused_uploads"]?.int == 1)
            #expect(stats["objects"]?["pending"]?["photos"] == nil)
            let open = try await system.call("gw-a", .GET, "/v1/conflicts?table=photos")
            let record = try #require(open.json["conflicts"]?.array?.first)
            #expect(open.json["conflicts"]?.array?.count == 1)
            #expect(record["id"] == "p1")
            #expect(record["kind"] == "error")
            #expect(record["error"]?["code"] == "object_too_large")
            #expect(record["error"]?["field"] == "image")
            #expect(record["error"]?["message"]?.string?.contains("objects.max_bytes") == true)
            let sent = try await system.syncCounter("gw-a", "object_chunk_bytes_sent")
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            #expect(try await system.syncCounter("gw-a", "object_chunk_bytes_sent") == sent)

            // Settled after a smaller object replaced it: that one goes, and the refused one,
            // named by no row, leaves the queue.
            let smaller = TestObject(size: 20_000, seed: 33)
            try await ObjectSyncEndToEndTests.put(system, "photos", "p1", "image", smaller)
            let settled = try await system.call("gw-a", .POST, "/v1/conflicts/photos/p1", body: #"{"take":"local"}"#)
            #expect(settled.status == 200, "\(settled.body)")
            #expect(try await system.sync("gw-a", table: "photos").status == 200)
            #expect(try await system.stats("gw-a")["objects"]?["refused_uploads"]?.int == 0)
            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            let replaced = try await system.readObject("gw-b", table: "photos", row: "p1", column: "image")
            #expect(replaced.status == 200, "\(replaced.body)")
            #expect(replaced.digest == smaller.digest)
        }
    }
}

/// An object the cloud lists but cannot serve whole (a chunk gone from its chunk store) is
/// fetched again a period later; the objects queued after it arrive meanwhile.
@Suite struct UnservedObjectTests {
    @Test func anObjectWhoseChunkTheCloudLostDoesNotHoldBackTheOthers() async throws {
        try await ObjectSystem.run { system in
            let lost = TestObject(size: 50_000, seed: 41)
            let kept = TestObject(size: 60_000, seed: 42)
            for (row, object) in [("p1", lost), ("p2", kept)] {
                try await ObjectSyncEndToEndTests.put(system, "photos", row, "image", object)
                #expect(try await system.sync("gw-a", table: "photos").status == 200)
            }
            // The first object's one chunk leaves the cloud's chunk store behind its back.
            let chunks = try DatabaseQueue(path: system.base.live.directory("cloud") + "/chunks.sqlite")
            let removed = try await chunks.write { db in
                try db.execute(sql: "DELETE FROM chunks WHERE hash = ?", arguments: [Data(lost.digest.hash.bytes)])
                return db.changesCount
            }
            #expect(removed == 1)
            try await chunks.close()

            // gw-b pulls both rows and queues both objects: the lost one is put off, the other comes.
            #expect(try await system.sync("gw-b", table: "photos").status == 200)
            let stats = try await system.stats("gw-b")
            #expect(stats["sync"]?["objects_fetched"]?.int == 1)
            #expect(stats["sync"]?["object_fetch_failures"]?.int == 1)
            #expect(stats["sync"]?["consecutive_failures"]?.int == 0)
            let read = try await system.readObject("gw-b", table: "photos", row: "p2", column: "image")
            #expect(read.status == 200, "\(read.body)")
            #expect(read.digest == kept.digest)
        }
    }
}
