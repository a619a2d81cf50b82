import DallyCore
import Testing

@testable import DallyStore

@Suite("Replica paging")
struct ReplicaPagingTests {
    let store: ReplicaStore

    init() throws {
        store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { 42 })
    }

    @Test func pagesCoverEveryRowExactlyOnceEvenWithIdenticalTimestamps() async throws {
        // All rows share updated_at 42: the sequence cursor, not the time, orders them.
        _ = try await store.writeBatch((0..<25).map { put("r\($0)", [(0, .text("c\($0 % 3)"))]) }, table: "orders", allOrNothing: false)
        var seen: [String] = []
        var since: Int64 = 0
        var pages = 0
        while true {
            let page = try await store.rows(RowQuery(table: "orders", since: since, limit: 10))
            seen += page.rows.map(\.row.id)
            since = page.nextSince
            pages += 1
            if !page.more { break }
        }
        #expect(pages == 3)
        #expect(seen == (0..<25).map { "r\($0)" })
    }

    @Test func filtersMatchTypedValuesAndTombstonesAreHiddenUnlessAsked() async throws {
        _ = try await store.write(put("a", [(0, .text("Ada")), (2, .boolean(true))]), table: "orders")
        _ = try await store.write(put("b", [(0, .text("Bea")), (2, .boolean(false))]), table: "orders")
        _ = try await store.write(put("c", [(0, .text("Ada"))]), table: "orders")
        _ = try await store.write(delete("c"), table: "orders")

        let ada = try await store.rows(RowQuery(table: "orders", limit: 10, filters: [("customer", .text("Ada"))]))
        #expect(ada.rows.map(\.row.id) == ["a"])
        let paid = try await store.rows(RowQuery(table: "orders", limit: 10, filters: [("paid", .boolean(true))]))
        #expect(paid.rows.map(\.row.id) == ["a"])
        let unpaid = try await store.rows(RowQuery(table: "orders", limit: 10, filters: [("paid", .null)]))
        #expect(unpaid.rows.isEmpty)
        let all = try await store.rows(RowQuery(table: "orders", limit: 10, includeDeleted: true))
        #expect(all.rows.map(\.row.id) == ["a", "b", "c"])
        #expect(all.rows.last?.row.deleted == true)
    }

    @Test func changesMergeTablesInSequenceOrderAndIncludeTombstones() async throws {
        _ = try await store.write(put("o1", []), table: "orders")
        _ = try await store.write(put("n1", []), table: "notes")
        _ = try await store.write(put("o2", []), table: "orders")
        _ = try await store.write(delete("n1"), table: "notes")

        let page = try await store.changes(tables: ["orders", "notes"], since: 0, limit: 3)
        #expect(page.rows.map { "\($0.table)/\($0.row.id)" } == ["orders/o1", "orders/o2", "notes/n1"])
        #expect(page.rows.last?.row.deleted == true)
        #expect(page.nextSince == 4)
        #expect(!page.more)

        let first = try await store.changes(tables: ["orders", "notes"], since: 0, limit: 1)
        #expect(first.more)
        #expect(first.nextSince == 1)
        let empty = try await store.changes(tables: ["orders"], since: 4, limit: 10)
        #expect(empty.rows.isEmpty)
        #expect(empty.nextSince == 4)
    }
}
