import DallyCore
import DallySync
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

    /// A replica from before in-flight rows mirrored their entries (schema v10), with a batch in
    /// flight and a row written again meanwhile: the migrations turn its per-row records into
    /// the batch's section (schema v18, its ids in a table of their own since v19), the summary
    /// counts the batch from the outbox, and its
    /// answer settles it.
    @Test func inFlightRowsOfAnOlderReplicaBecomeTheirBatchsSection() async throws {
        let directory = temporaryDirectory()
        let batchID: String
        let sectionBefore: [Row]
        do {
            let store = try ReplicaStore.open(directory: directory, tables: [orders], now: { 7 })
            for id in ["a", "b", "c"] { _ = try await store.write(put(id, [(0, .text(id))]), table: "orders") }
            batchID = try #require(try await store.nextBatch(gateway: "gw", maxRows: 2)).batchID
            _ = try await store.write(put("a", [(0, .text("written again, longer"))]), table: "orders")
            sectionBefore = try store.pool.read { db in
                try Row.fetchAll(db, sql: "SELECT s.batch, s.tbl, i.ids, s.lowest, s.highest, s.seq FROM dally_inflight_sections s JOIN dally_inflight_ids i USING (batch, tbl)")
            }
            try store.close()
        }
        #expect(sectionBefore.count == 1)
        // Back to v10: a record per row in flight (with the batch's highest sequence number),
        // their batch index, v10's own triggers (one for each of totals and ages, on insert and
        // on delete), no tallies, no sections.
        try await DatabaseQueue(path: directory + "/replica.sqlite").write { db in
            try db.execute(
                sql: """
                    CREATE TABLE dally_inflight_rows (
                        tbl TEXT NOT NULL, row_id TEXT NOT NULL, seq INTEGER NOT NULL, batch TEXT,
                        PRIMARY KEY (tbl, row_id)
                    ) WITHOUT ROWID;
                    INSERT INTO dally_inflight_rows (tbl, row_id, seq, batch)
                        SELECT s.tbl, j.value, s.seq, s.batch
                        FROM dally_inflight_sections s JOIN dally_inflight_ids i USING (batch, tbl), json_each(i.ids) j;
                    DROP TABLE dally_inflight_sections;
                    DROP TABLE dally_inflight_ids;
                    DROP TABLE dally_inflight_tallies;
                    DROP TRIGGER dally_outbox_entered;
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
                    DELETE FROM grdb_migrations
                    WHERE identifier IN (
                        'v11-inflight-entries', 'v12-settled-in-sets', 'v13-outbox-triggers-folded',
                        'v14-outbox-deletes-uncounted-by-their-writers', 'v15-inflight-tallies', 'v18-inflight-sections',
                        'v19-inflight-ids-apart');
                    """)
        }
        let store = try ReplicaStore.open(directory: directory, tables: [orders], now: { 8 })
        let (sectionAfter, triggers, tables) = try store.pool.read { db in
            (
                try Row.fetchAll(db, sql: "SELECT s.batch, s.tbl, i.ids, s.lowest, s.highest, s.seq FROM dally_inflight_sections s JOIN dally_inflight_ids i USING (batch, tbl)"),
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name"),
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'dally_inflight%' ORDER BY name")
            )
        }
        #expect(sectionAfter == sectionBefore)
        #expect(triggers == ["dally_outbox_entered", "dally_outbox_reaged", "dally_outbox_resized"])
        #expect(tables == ["dally_inflight", "dally_inflight_ids", "dally_inflight_sections", "dally_inflight_tallies"])
        // The batch in flight has a stale tally: the summary counts its rows' entries.
        #expect(try await store.pool.read { db in try FlightTally.read(table: "orders", db: db) } == nil)
        let summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight) == (1, 2))
        // Its answer settles the row unchanged since and keeps the one written again pending.
        let report = try await store.applyAnswer(
            BatchAnswer(
                batchID: batchID, replayed: false,
                results: [.init(table: "orders", rows: [.accepted(id: "a", version: 1), .accepted(id: "b", version: 2)])],
                changes: []))
        #expect(report.accepted == 2)
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["a", "c"])
        #expect(try await store.row(table: "orders", id: "b")?.version == 2)
        let after = try #require(try await store.outboxSummary().first)
        #expect((after.pending, after.inFlight) == (2, 0))
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
