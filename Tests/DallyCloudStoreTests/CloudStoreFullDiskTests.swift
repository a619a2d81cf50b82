import DallyCloudPostgres
import DallyConfig
import DallyCore
import DallyObjects
import DallySync
import DallyTestSupport
import Foundation
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

    /// PostgreSQL's own full disk (`disk_full`, SQLSTATE 53100): the database on a tablespace
    /// on a 12 MiB tmpfs, filled by batches of wide rows until the server cannot extend a file.
    /// The batch that meets it, and a chunk after it, are refused `insufficient_storage`, not
    /// `500 storage`; what was accepted before is all there, and reads go on.
    // Five minutes: alone it takes 5 s, beside the whole suite on two cores 69 s (the shared
    // cluster's start and the database's copy of its template wait their turn).
    @Test(.enabled(if: TmpfsMount.isPermitted), .timeLimit(.minutes(5)))
    func aPostgreSQLServerOutOfDiskSpaceRefusesWritesAsSuchAndKeepsWhatItHad() async throws {
        let cluster = try await offPool { try PostgresCluster.shared() }
        let disk = try TmpfsMount(size: "12m", owner: "postgres")
        let name = "full_" + UUID().uuidString.prefix(8).lowercased()
        _ = try cluster.psql("CREATE TABLESPACE \(name) LOCATION '\(disk.path)'", database: "postgres")
        _ = try cluster.psql("CREATE DATABASE \(name) TABLESPACE \(name)", database: "postgres")
        let settings = PostgresSettings(host: "127.0.0.1", port: cluster.port, username: PostgresCluster.user, database: name)
        let store = try await PostgresCloudStore.open(settings, tables: cloudTables, logger: quietLogger)
        defer {
            try? store.close()
            _ = try? cluster.psql("DROP DATABASE \(name) WITH (FORCE)", database: "postgres")
            _ = try? cluster.psql("DROP TABLESPACE \(name)", database: "postgres")
            disk.unmount()
        }
        var accepted = 0
        var refused: DallyError?
        for n in 0..<100 where refused == nil {
            // Random text: PostgreSQL compresses a long repeated value to nothing.
            let rows = (0..<200).map { cloudPut("b\(n)-\($0)", [.string((0..<40).map { _ in UUID().uuidString }.joined())]) }
            do {
                let answer = try await store.send(cloudBatch("full-\(n)", [cloudSection("orders", ["customer"], rows)]))
                accepted += answer.allRows.count
            } catch let error as DallyError {
                refused = error
            }
        }
        let full = try #require(refused, "12 MiB never filled")
        #expect(full.code == .insufficientStorage, "\(full)")
        #expect(full.message.contains("out of disk space"), "\(full.message)")
        #expect(accepted >= 200)
        #expect(store.versions["orders"] == Int64(accepted))
        // Reads go on, and hold every row accepted.
        #expect(try await store.allChanges("orders").count == accepted)
        let chunk = (0..<4_096).flatMap { _ in Array(UUID().uuidString.utf8) }
        let chunkRefused = await #expect(throws: DallyError.self) {
            try await store.chunks.put(ContentHash.of(chunk), bytes: chunk, now: 1_000)
        }
        #expect(chunkRefused?.code == .insufficientStorage, "\(String(describing: chunkRefused))")
    }
}
