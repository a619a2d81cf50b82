import DallyCore
import DallySync
import Testing

@testable import DallyStore

/// `/stats` and `/metrics` read the replica in one snapshot: the same figures as each read on
/// its own.
@Suite("Replica snapshot")
struct ReplicaSnapshotTests {
    @Test func theSnapshotHoldsWhatEachReadFindsOnItsOwn() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { 1_000 })
        defer { try? store.close() }
        _ = try await store.writeBatch(
            (1...3).map { put("o\($0)", [(0, .text("x"))]) }, table: "orders", allOrNothing: true)
        _ = try await store.write(put("n1", [(0, .text("a note"))]), table: "notes")
        // A batch in flight, answered with a conflict the cloud decided for no one: one open conflict.
        let batch = try #require(try await store.nextBatch(gateway: "g", maxRows: 2))
        let sent = try sentRequest(batch).sections[0]
        let server = ChangePage.ChangedRow(
            id: sent.changes[0].id, version: 7, updatedAt: 5, deleted: false,
            values: Array(repeating: .null, count: sent.columns.count))
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch, table: sent.table,
                [.conflict(id: sent.changes[0].id, .init(policy: .manual, winner: .none, version: 7, server: server))]))

        let snapshot = try await store.snapshot()
        #expect(snapshot.outbox == (try await store.outboxSummary()))
        #expect(snapshot.outbox.map(\.table) == ["notes", "orders"])
        #expect(snapshot.openConflicts == (try await store.openConflictCounts()))
        #expect(snapshot.openConflicts.values.reduce(0, +) == 1)
        #expect(snapshot.lifecycle == (try await store.lifecycle()))
        #expect(snapshot.objectTotals == (try await store.objectTotals()))
        #expect(snapshot.objectUploads == (try await store.objectUploadSummaries()))
    }
}
