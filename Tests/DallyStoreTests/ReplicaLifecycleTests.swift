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
