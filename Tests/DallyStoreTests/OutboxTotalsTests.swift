import DallyCore
import DallySync
import GRDB
import Testing

@testable import DallyStore

/// The outbox's running totals (what `/stats`, the scheduler and a table's bound read) follow
/// its entries through every way an entry leaves: an accepted change, a conflict either side
/// won, a change written again in flight, the server's side taken, a rejection.
@Suite("Outbox totals")
struct OutboxTotalsTests {
    let clock = FixedClock(1_000_000)
    let store: ReplicaStore

    init() throws {
        let clock = self.clock
        store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { clock.now })
    }

    /// Per table, the totals as kept and as counted from the entries.
    private func totals() async throws -> (kept: [String], counted: [String]) {
        try await store.pool.read { db in
            let kept = try Row.fetchAll(
                db, sql: "SELECT tbl, entries, bytes FROM dally_outbox_totals WHERE entries <> 0 OR bytes <> 0 ORDER BY tbl")
            let counted = try Row.fetchAll(
                db, sql: "SELECT tbl, COUNT(*), SUM(bytes) FROM dally_outbox GROUP BY tbl ORDER BY tbl")
            let text = { (row: Row) in "\(row[0] as String) \(row[1] as Int64) \(row[2] as Int64)" }
            return (kept.map(text), counted.map(text))
        }
    }

    @Test func everyWayOutOfTheOutboxIsCounted() async throws {
        for id in ["a", "b", "c", "d", "e", "f"] {
            _ = try await store.write(put(id, [(0, .text("Local \(id)")), (1, .real(1))]), table: "orders")
        }
        _ = try await store.write(put("n", [(0, .text("note"))]), table: "notes")
        var now = try await totals()
        #expect(now.kept == now.counted)
        #expect(now.kept.map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["notes 1", "orders 6"])

        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.write(put("e", [(0, .text("Written again"))]), table: "orders")
        let server = { (id: String) in ordersRow(id, version: 9, at: 500, ["Server", 2.5, true]) }
        _ = try await store.applyAnswer(
            BatchAnswer(
                batchID: batch.batchID, replayed: false,
                results: [
                    BatchAnswer.SectionResult(
                        table: "orders",
                        rows: [
                            .accepted(id: "a", version: 1),
                            .conflict(id: "b", .init(policy: .lastWriterWins, winner: .server, version: 9, server: server("b"))),
                            .conflict(id: "c", .init(policy: .clientWins, winner: .client, version: 10, server: server("c"))),
                            .conflict(id: "d", .init(policy: .manual, winner: .none, version: 9, server: server("d"))),
                            .accepted(id: "e", version: 11),
                            .rejected(id: "f", .init(code: "wrong_type", message: "column 'total' expects REAL", field: "total")),
                        ]),
                    BatchAnswer.SectionResult(table: "notes", rows: [.accepted(id: "n", version: 1)]),
                ],
                changes: []))
        now = try await totals()
        #expect(now.kept == now.counted)
        // Left: the manual conflict, the row written again, the rejected change.
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID).sorted() == ["d", "e", "f"])
        #expect(now.kept.count == 1 && now.kept[0].hasPrefix("orders 3 "))

        // The server's side taken for the open conflict removes its entry too.
        _ = try await store.resolveConflict(table: "orders", id: "d", .takeServer)
        now = try await totals()
        #expect(now.kept == now.counted)
        #expect(now.kept.count == 1 && now.kept[0].hasPrefix("orders 2 "))
    }
}
