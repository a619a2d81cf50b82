import DallyCore
import DallySync
import GRDB
import Testing

@testable import DallyStore

/// Settling an answer runs no statement that changes the schema: GRDB empties a connection's
/// prepared statements after any such statement, and the writer would prepare every statement
/// again after each piece of every answer, the local writes' among them.
@Suite("Replica sync: settling keeps the writer's prepared statements")
struct SettleStatementTests {
    @Test func settlingAnAnswerKeepsTheWritersPreparedStatements() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], synchronousFull: false)
        defer { try? store.close() }
        _ = try await store.writeBatch(
            [put("o1", [(0, .text("a"))]), put("o2", [(0, .text("b"))])], table: "orders", allOrNothing: true)
        let batch = try #require(try await store.nextBatch(gateway: "g", maxRows: 10))
        #expect(batch.rows == 2)
        let table = try #require(store.tables["orders"])
        let (settled, kept) = try await store.pool.write { db -> (Int, Bool) in
            let before = try db.cachedStatement(sql: Outbox.upsert)
            let settled = try AcceptedRows.settle([("o1", 1), ("o2", 2)], table: table, batchCreatedAt: 0, db: db)
            return (settled, try db.cachedStatement(sql: Outbox.upsert) === before)
        }
        #expect(settled == 2)
        #expect(kept)
        let pending = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_outbox") }
        #expect(pending == 0)
    }
}
