import DallyCore
import DallySync
import Testing

@testable import DallyStore

/// A table whose declaration drops `local_only` sends the rows it held (``LocalRowsQueue``).
@Suite("A local-only table turned synced")
struct LocalRowsQueueTests {
    let directory = temporaryDirectory()

    func open(localOnly: Bool) throws -> ReplicaStore {
        try ReplicaStore.open(directory: directory, tables: [table("items", [("name", .text)], localOnly: localOnly)], now: { 1_000 })
    }

    @Test func theRowsItHeldGoUpAsNewRowsOnceAndItsTombstonesStay() async throws {
        let local = try open(localOnly: true)
        for id in ["a", "b", "c"] { _ = try await local.write(put(id, [(0, .text(id))]), table: "items") }
        _ = try await local.write(RowWrite(id: "b", kind: .delete, values: [], updatedAt: nil, expectedSeq: nil), table: "items")
        #expect(try await local.outboxEntries(table: "items").isEmpty)
        try local.close()

        let synced = try open(localOnly: false)
        #expect(try await synced.outboxEntries(table: "items").map(\.rowID).sorted() == ["a", "c"])
        let batch = try #require(try await synced.nextBatch(gateway: "gw", maxRows: 10))
        let changes = try sentRequest(batch).sections.flatMap(\.changes)
        #expect(changes.map(\.id).sorted() == ["a", "c"])
        #expect(changes.allSatisfy { $0.baseVersion == nil && !$0.deleted })
        try synced.close()

        // Queued once: a restart does not add them again, and a row synced since stays clean.
        let again = try open(localOnly: false)
        #expect(try await again.outboxEntries(table: "items").map(\.rowID).sorted() == ["a", "c"])
        try again.close()
    }

    @Test func aSyncedTableTurnedLocalOnlyAndBackSendsWhatWasWrittenMeanwhile() async throws {
        let synced = try open(localOnly: false)
        try synced.close()
        let local = try open(localOnly: true)
        _ = try await local.write(put("x", [(0, .text("x"))]), table: "items")
        try local.close()
        let back = try open(localOnly: false)
        #expect(try await back.outboxEntries(table: "items").map(\.rowID) == ["x"])
    }
}
