import DallyCore
import GRDB
import Testing

@testable import DallyStore

/// The statements clients' filters shape: cached up to a bound, prepared anew past it, and
/// the same either way.
@Suite("StatementShapes")
struct StatementShapesTests {
    @Test func theFirstShapesAreCachedAndTheRestPreparedEachTime() throws {
        let queue = try DatabaseQueue()
        let shapes = StatementShapes(limit: 2)
        try queue.read { db in
            for n in 1...4 {
                let sql = "SELECT \((1...n).map(String.init).joined(separator: " + "))"
                let first = try shapes.statement(sql, db: db)
                let again = try shapes.statement(sql, db: db)
                // A cached shape is the connection's one statement; the others are new each time.
                #expect((first === again) == (n <= 2), "shape \(n)")
                #expect(try Int.fetchOne(again) == n * (n + 1) / 2)
            }
        }
        #expect(shapes.count == 2)
    }

    /// A filtered page reads the same rows whether its shape is cached or not.
    @Test func aFilteredPageIsTheSamePastTheBound() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], now: { 42 })
        defer { try? store.close() }
        _ = try await store.write(put("a", [(0, .text("A"))]), table: "orders")
        _ = try await store.write(put("b", [(0, .text("B"))]), table: "orders")
        for repeats in 1...(StatementShapes.defaultLimit + 3) {
            let filters: [(column: String, value: Value)] = Array(repeating: ("customer", .text("A")), count: repeats)
            let page = try await store.rows(RowQuery(table: "orders", since: 0, limit: 10, filters: filters))
            #expect(page.rows.map(\.1.id) == ["a"], "\(repeats) filters")
        }
        #expect(store.statementShapes.count == StatementShapes.defaultLimit)
    }
}
