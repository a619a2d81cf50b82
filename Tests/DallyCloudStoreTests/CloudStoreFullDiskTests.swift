import DallyCore
import DallyObjects
import DallySync
import DallyTestSupport
import GRDB
import Testing

@testable import DallyCloudStore

/// The cloud's SQLite store on a full disk (SQLite's `max_page_count` standing in for the
/// filesystem; `FullDiskProcessTests` fills a real one under a gateway): a batch and a chunk are
/// refused `insufficient_storage`, saying whose disk, instead of an internal error; nothing of
/// them is saved, and once there is room again the same batch applies.
@Suite("Cloud store: a full disk")
struct CloudStoreFullDiskTests {
    @Test func aBatchAndAChunkOnAFullDiskAreRefusedAsSuchAndApplyOnceThereIsRoom() async throws {
        let store = try openSQLiteCloud()
        defer { try? store.close() }
        _ = try await store.send(cloudBatch("first", [cloudSection("orders", ["customer"], [cloudPut("o1", ["Ada"])])]))
        for pool in [store.pool, store.chunkStore.pool] {
            try await pool.writeWithoutTransaction { db in
                let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                try db.execute(sql: "PRAGMA max_page_count = \(pages)")
            }
        }
        let wide = String(repeating: "x", count: 2_000)
        let batch = cloudBatch("full", [cloudSection("orders", ["customer"], (0..<200).map { cloudPut("n\($0)", [.string(wide)]) })])
        let refused = await #expect(throws: DallyError.self) { try await store.send(batch) }
        #expect(refused?.code == .insufficientStorage)
        #expect(refused?.message.contains("the cloud's disk is full") == true, "\(String(describing: refused))")
        let chunk = [UInt8](repeating: 7, count: 64 << 10)
        let chunkRefused = await #expect(throws: DallyError.self) {
            try await store.chunks.put(ContentHash.of(chunk), bytes: chunk, now: 1_000)
        }
        #expect(chunkRefused?.code == .insufficientStorage)
        #expect(store.versions["orders"] == 1)

        try await store.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        let applied = try await store.send(batch)
        #expect(applied.allRows.count == 200)
        #expect(store.versions["orders"] == 201)
    }
}
