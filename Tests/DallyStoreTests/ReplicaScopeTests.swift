import DallyCore
import DallySync
import Testing

@testable import DallyStore

/// `orders` scoped to `customer = "A"`.
let ordersForA: TableSchema = TableSchema(
    name: orders.name, columns: orders.columns, conflict: orders.conflict, policy: orders.policy,
    scope: RowScope([.init(column: "customer", values: [.string("A")])]))

@Suite("Replica: rows leaving the scope")
struct ReplicaScopeTests {
    @Test func aLeftEntryDropsACleanRowKeepsADirtyOneAndIgnoresAnUnknownOne() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], now: { 42 })
        defer { try? store.close() }
        _ = try await store.applyChanges([
            ordersPage(version: 2, [ordersRow("c1", version: 1, ["A", 1.0, false]), ordersRow("c2", version: 2, ["A", 2.0, false])])
        ])
        _ = try await store.write(put("c2", [(0, .text("A")), (1, .real(3))]), table: "orders")
        let before = try await store.changes(tables: ["orders"], since: 0, limit: 100).nextSince

        var page = ordersPage(since: 2, version: 5, [])
        page.rows = [
            .init(id: "c1", version: 3, updatedAt: 9, deleted: false, left: true, values: []),
            .init(id: "c2", version: 4, updatedAt: 9, deleted: false, left: true, values: []),
            .init(id: "c9", version: 5, updatedAt: 9, deleted: false, left: true, values: []),
        ]
        let report = try await store.applyChanges([page])
        #expect(report.received == 1)

        let c1 = try #require(try await store.row(table: "orders", id: "c1"))
        #expect(c1.deleted)
        #expect(c1.version == 0)
        let c2 = try #require(try await store.row(table: "orders", id: "c2"))
        #expect(!c2.deleted && c2.version == nil && c2.values[1] == .real(3))
        #expect(try await store.row(table: "orders", id: "c9") == nil)
        // Local feeds see c1 go; nothing goes upstream for it.
        let feed = try await store.changes(tables: ["orders"], since: before, limit: 100)
        #expect(feed.rows.map(\.row.id) == ["c1"])
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(try sentRequest(batch).sections.flatMap(\.changes).map(\.id) == ["c2"])
        #expect(try await store.cloudCursors().entries.first { $0.table == "orders" }?.version == 5)
    }

    @Test func aScopeChangedAtStartDropsWhatLeftKeepsDirtyRowsAndPullsAgain() async throws {
        let directory = temporaryDirectory()
        do {
            let store = try ReplicaStore.open(directory: directory, tables: [orders], now: { 42 })
            #expect(try await store.reconcileScopes() == [])
            _ = try await store.applyChanges([
                ordersPage(version: 3, [
                    ordersRow("a1", version: 1, ["A", 1.0, false]), ordersRow("b1", version: 2, ["B", 1.0, false]),
                    ordersRow("b2", version: 3, ["B", 1.0, false]),
                ])
            ])
            _ = try await store.write(patch("b2", [(1, .real(7))]), table: "orders")
            try store.close()
        }
        let store = try ReplicaStore.open(directory: directory, tables: [ordersForA], now: { 43 })
        defer { try? store.close() }
        #expect(try await store.reconcileScopes() == ["orders"])
        #expect(try await store.row(table: "orders", id: "a1")?.deleted == false)
        #expect(try await store.row(table: "orders", id: "b1")?.deleted == true)
        let b2 = try #require(try await store.row(table: "orders", id: "b2"))
        #expect(!b2.deleted && b2.version == nil)
        #expect(try await store.cloudCursors().entries.first { $0.table == "orders" }?.version == 0)
        #expect(store.scopes["orders"] == ordersForA.scope)

        // A page asked with the old cursor (a batch in flight before the restart) is not applied…
        _ = try await store.applyChanges([ordersPage(since: 3, version: 6, [ordersRow("x1", version: 6, ["B", 1.0, false])])])
        #expect(try await store.row(table: "orders", id: "x1") == nil)
        #expect(try await store.cloudCursors().entries.first { $0.table == "orders" }?.version == 0)
        // …the pull from 0 is.
        _ = try await store.applyChanges([ordersPage(since: 0, version: 6, [ordersRow("a2", version: 5, ["A", 1.0, false])])])
        #expect(try await store.row(table: "orders", id: "a2")?.deleted == false)
        // The same scope at the next start changes nothing.
        #expect(try await store.reconcileScopes() == [])
    }

    @Test func aRejectingScopeRefusesWritesOutsideItAndChangesNothing() async throws {
        let rejecting = TableSchema(
            name: orders.name, columns: orders.columns, conflict: orders.conflict, policy: orders.policy,
            scope: ordersForA.scope, scopeWrites: .reject)
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [rejecting], now: { 42 })
        defer { try? store.close() }
        _ = try await store.write(put("a1", [(0, .text("A"))]), table: "orders")
        for write in [put("b1", [(0, .text("B"))]), patch("a1", [(0, .text("B"))]), put("n1", [(1, .real(1))])] {
            do {
                _ = try await store.write(write, table: "orders")
                Issue.record("write \(write.id) outside the scope was accepted")
            } catch let error as DallyError {
                #expect(error.code == .outOfScope)
                #expect(error.field == "customer")
            }
        }
        #expect(try await store.row(table: "orders", id: "a1")?.values.first == .text("A"))
        #expect(try await store.row(table: "orders", id: "b1") == nil)
        _ = try await store.write(delete("a1"), table: "orders")
    }
}
