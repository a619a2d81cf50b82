import DallyCore
import GRDB
import Testing

@testable import DallyStore

@Suite("Replica lifecycle: restart, migrations, locking")
struct ReplicaLifecycleTests {
    @Test func restartKeepsRowsTombstonesOutboxAndTheSequence() async throws {
        let directory = temporaryDirectory()
        do {
            let store = try ReplicaStore.open(directory: directory, tables: [orders], now: { 7 })
            _ = try await store.write(put("a", [(0, .text("Ada"))]), table: "orders")
            _ = try await store.write(put("b", []), table: "orders")
            _ = try await store.write(delete("b"), table: "orders")
            try store.close()
        }
        let store = try ReplicaStore.open(directory: directory, tables: [orders], now: { 8 })
        #expect(store.lastSeq == 3)
        #expect(store.counts["orders"]?.live == 1)
        #expect(store.counts["orders"]?.tombstones == 1)
        #expect(try await store.row(table: "orders", id: "a")?.values.first == .text("Ada"))
        #expect(try await store.row(table: "orders", id: "b")?.deleted == true)
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["a", "b"])
        let page = try await store.changes(tables: ["orders"], since: 1, limit: 10)
        #expect(page.rows.map(\.row.seq) == [3])
        #expect(try await store.write(put("c", []), table: "orders").seq == 4)
    }

    /// A replica from before in-flight rows mirrored their entries (schema v10) with a batch in
    /// flight and a row written again meanwhile: the migration fills the mirrors from the
    /// outbox, and the summary counts the batch as before.
    @Test func inFlightRowsOfAnOlderReplicaAreMirroredByTheMigration() async throws {
        let directory = temporaryDirectory()
        do {
            let store = try ReplicaStore.open(directory: directory, tables: [orders], now: { 7 })
            for id in ["a", "b", "c"] { _ = try await store.write(put(id, [(0, .text(id))]), table: "orders") }
            _ = try #require(try await store.nextBatch(gateway: "gw", maxRows: 2))
            _ = try await store.write(put("a", [(0, .text("written again, longer"))]), table: "orders")
            try store.close()
        }
        // Back to v10: no mirrors, no triggers keeping them, v10's own triggers (one for each
        // of totals and ages, on insert and on delete), the in-flight rows' batch index, no
        // tallies.
        try await DatabaseQueue(path: directory + "/replica.sqlite").write { db in
            try db.execute(
                sql: """
                    DROP TRIGGER dally_inflight_rows_remirrored;
                    DROP TABLE dally_inflight_tallies;
                    DROP TRIGGER dally_outbox_entered;
                    DROP TRIGGER dally_outbox_flight_changed;
                    CREATE INDEX dally_inflight_rows_batch ON dally_inflight_rows (batch);
                    CREATE TRIGGER dally_outbox_counted AFTER INSERT ON dally_outbox BEGIN
                        INSERT INTO dally_outbox_totals (tbl, entries, bytes) VALUES (new.tbl, 1, new.bytes)
                        ON CONFLICT(tbl) DO UPDATE SET entries = entries + 1, bytes = bytes + excluded.bytes;
                    END;
                    CREATE TRIGGER dally_outbox_uncounted AFTER DELETE ON dally_outbox BEGIN
                        UPDATE dally_outbox_totals SET entries = entries - 1, bytes = bytes - old.bytes WHERE tbl = old.tbl;
                    END;
                    CREATE TRIGGER dally_outbox_aged AFTER INSERT ON dally_outbox BEGIN
                        INSERT INTO dally_outbox_ages (tbl, at, entries) VALUES (new.tbl, new.first_dirty_at, 1)
                        ON CONFLICT(tbl, at) DO UPDATE SET entries = entries + 1;
                    END;
                    CREATE TRIGGER dally_outbox_unaged AFTER DELETE ON dally_outbox BEGIN
                        DELETE FROM dally_outbox_ages WHERE tbl = old.tbl AND at = old.first_dirty_at AND entries = 1;
                        UPDATE dally_outbox_ages SET entries = entries - 1 WHERE tbl = old.tbl AND at = old.first_dirty_at;
                    END;
                    ALTER TABLE dally_inflight_rows DROP COLUMN at;
                    ALTER TABLE dally_inflight_rows DROP COLUMN bytes;
                    DELETE FROM grdb_migrations
                    WHERE identifier IN (
                        'v11-inflight-entries', 'v12-settled-in-sets', 'v13-outbox-triggers-folded',
                        'v14-outbox-deletes-uncounted-by-their-writers', 'v15-inflight-tallies');
                    """)
        }
        let store = try ReplicaStore.open(directory: directory, tables: [orders], now: { 8 })
        let (mirrors, entries) = try await store.pool.read { db in
            (
                try Row.fetchAll(db, sql: "SELECT row_id, at, bytes FROM dally_inflight_rows ORDER BY row_id"),
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT row_id, first_dirty_at AS at, bytes FROM dally_outbox
                        WHERE row_id IN ('a', 'b') ORDER BY row_id
                        """)
            )
        }
        #expect(mirrors.count == 2)
        #expect(mirrors == entries)
        let triggers = try await store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        }
        #expect(
            triggers == [
                "dally_inflight_rows_remirrored", "dally_outbox_entered", "dally_outbox_flight_changed",
                "dally_outbox_reaged", "dally_outbox_resized",
            ])
        // The batch in flight has a stale tally: the summary counts its records.
        #expect(try await store.pool.read { db in try FlightTally.read(table: "orders", db: db) } == nil)
        let summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight) == (1, 2))
        // And the triggers keep them from now on.
        _ = try await store.write(put("b", [(0, .text("b, written again"))]), table: "orders")
        let b = try await store.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT bytes FROM dally_inflight_rows WHERE row_id = 'b'") ==
                Int64.fetchOne(db, sql: "SELECT bytes FROM dally_outbox WHERE row_id = 'b'")
        }
        #expect(b)
    }

    @Test func anAddedColumnOrTableIsMigrated() async throws {
        let directory = temporaryDirectory()
        do {
            let store = try ReplicaStore.open(directory: directory, tables: [orders])
            _ = try await store.write(put("a", [(0, .text("Ada"))]), table: "orders")
            try store.close()
        }
        let wider = table("orders", [("customer", .text), ("total", .real), ("paid", .boolean), ("note", .text)])
        let store = try ReplicaStore.open(directory: directory, tables: [wider, notes])
        #expect(try await store.row(table: "orders", id: "a")?.values == [.text("Ada"), .null, .null, .null])
        let row = try await store.write(patch("a", [(3, .text("hi"))]), table: "orders")
        #expect(row.values.last == .text("hi"))
        _ = try await store.write(put("n", []), table: "notes")
    }

    @Test func aChangedTypeADroppedColumnOrADroppedTableIsRefused() async throws {
        let directory = temporaryDirectory()
        try ReplicaStore.open(directory: directory, tables: [orders, notes]).close()

        let retyped = table("orders", [("customer", .integer), ("total", .real), ("paid", .boolean)])
        #expect(throws: StoreError.self) { try ReplicaStore.open(directory: directory, tables: [retyped, notes]) }
        let narrower = table("orders", [("customer", .text), ("total", .real)])
        #expect(throws: StoreError.self) { try ReplicaStore.open(directory: directory, tables: [narrower, notes]) }
        #expect(throws: StoreError.self) { try ReplicaStore.open(directory: directory, tables: [orders]) }
        // The refusals changed nothing: the original configuration still opens.
        try ReplicaStore.open(directory: directory, tables: [orders, notes]).close()
    }

    @Test func aSecondProcessCannotOpenTheSameDirectory() throws {
        let directory = temporaryDirectory()
        let store = try ReplicaStore.open(directory: directory, tables: [orders])
        #expect(throws: StoreError.self) { try ReplicaStore.open(directory: directory, tables: [orders]) }
        try store.close()
        try ReplicaStore.open(directory: directory, tables: [orders]).close()
    }
}

/// A replica a newer Dally wrote is refused, not misread.
@Suite("Schema upgrades")
struct SchemaUpgradeTests {
    @Test func aReplicaFromANewerBuildIsRefusedWithWhatToDo() throws {
        let directory = temporaryDirectory()
        try ReplicaStore.open(directory: directory, tables: [orders]).close()
        let path = directory + "/replica.sqlite"
        try DatabaseQueue(path: path).write {
            try $0.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
        }
        #expect {
            try ReplicaStore.open(directory: directory, tables: [orders])
        } throws: { error in
            "\(error)".contains("newer version of Dally") && "\(error)".contains("v99-from-the-future")
        }
        // Refused without keeping the directory locked: the newer build can still open it.
        try DatabaseQueue(path: path).write {
            try $0.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v99-from-the-future'")
        }
        try ReplicaStore.open(directory: directory, tables: [orders]).close()
    }
}
