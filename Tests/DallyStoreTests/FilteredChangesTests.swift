import DallyCore
import GRDB
import Testing

@testable import DallyStore

/// `orders` whose `customer` column feeds may filter on (it has a move log).
private let ordersByCustomer = TableSchema(
    name: orders.name, columns: orders.columns, conflict: orders.conflict, policy: orders.policy,
    scopeColumns: ["customer"])

@Suite("Replica: filtered changes and the move log")
struct FilteredChangesTests {
    let forA = ["orders": RowFilter(equalities: [("customer", .text("A"))])]

    @Test func aRowThatMatchedAtTheCursorAndNoLongerDoesHasLeft() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [ordersByCustomer], now: { 42 })
        defer { try? store.close() }
        _ = try await store.write(put("a", [(0, .text("A"))]), table: "orders")  // 1
        _ = try await store.write(put("b", [(0, .text("B"))]), table: "orders")  // 2
        _ = try await store.write(put("d", [(0, .text("A"))]), table: "orders")  // 3
        _ = try await store.write(patch("a", [(0, .text("B"))]), table: "orders")  // 4: a leaves
        _ = try await store.write(patch("b", [(0, .text("C"))]), table: "orders")  // 5: b never matched
        _ = try await store.write(patch("d", [(1, .real(2))]), table: "orders")  // 6: d stays, no move logged
        _ = try await store.write(RowWrite(id: "d", kind: .delete, values: [], updatedAt: nil, expectedSeq: nil), table: "orders")  // 7

        let page = try await store.changes(tables: ["orders"], since: 3, limit: 100, filters: forA)
        #expect(page.rows.map(\.row.id) == ["a", "d"])
        #expect(page.left == [4])
        #expect(page.rows.last?.row.deleted == true)
        #expect(page.nextSince == 7)
        // From a cursor after the move, the row was not held: nothing.
        let later = try await store.changes(tables: ["orders"], since: 4, limit: 100, filters: forA)
        #expect(later.rows.map(\.row.id) == ["d"])
        // Only moves are logged: a's, b's and d's delete (their customer changed).
        #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_moves") } == 3)
    }

    @Test func aPageOfSkippedRowsMovesTheCursorToTheLatest() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [ordersByCustomer], now: { 42 })
        defer { try? store.close() }
        for i in 0..<5 { _ = try await store.write(put("b\(i)", [(0, .text("B"))]), table: "orders") }
        let page = try await store.changes(tables: ["orders"], since: 0, limit: 2, filters: forA)
        #expect(page.rows.isEmpty && !page.more && page.nextSince == 5)
        _ = try await store.write(put("a", [(0, .text("A"))]), table: "orders")
        _ = try await store.write(put("a2", [(0, .text("A"))]), table: "orders")
        _ = try await store.write(put("a3", [(0, .text("A"))]), table: "orders")
        let full = try await store.changes(tables: ["orders"], since: 5, limit: 2, filters: forA)
        #expect(full.rows.map(\.row.id) == ["a", "a2"] && full.more && full.nextSince == 7)
    }
}
