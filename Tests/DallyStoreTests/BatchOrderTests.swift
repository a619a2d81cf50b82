import DallyCore
import DallySync
import Testing

@testable import DallyStore

/// Which waiting rows a batch takes when more wait than it carries: in id order (the order of
/// the row table and the outbox, so that an answer settles into neighbouring pages), going on
/// from the last id the previous batch took and wrapping around, so that no row waits for ever.
@Suite("Batches: which waiting rows go first")
struct BatchOrderTests {
    let clock = FixedClock(1_000_000)
    let store: ReplicaStore

    init() throws {
        let clock = self.clock
        store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], now: { clock.now })
    }

    /// The next batch of at most `rows` rows, answered as accepted; the ids it carried.
    private func sendAndAccept(_ rows: Int) async throws -> [String] {
        guard let batch = try await store.nextBatch(gateway: "gw", maxRows: rows) else { return [] }
        let ids = try sentRequest(batch).sections.flatMap { $0.changes.map(\.id) }
        _ = try await store.applyAnswer(
            replicaAnswer(batch, ids.enumerated().map { .accepted(id: $0.element, version: Int64($0.offset + 1)) }))
        return ids
    }

    @Test func eachBatchGoesOnAfterTheLastIdThePreviousTookAndWrapsAround() async throws {
        for id in ["c", "a", "e", "b", "d"] {
            _ = try await store.write(put(id, [(0, .text(id))]), table: "orders")
        }
        #expect(try await sendAndAccept(2) == ["a", "b"])
        // Written after the cursor passed "b": one id before it, one after all the others.
        for id in ["a0", "f"] {
            _ = try await store.write(put(id, [(0, .text(id))]), table: "orders")
        }
        #expect(try await sendAndAccept(2) == ["c", "d"])
        #expect(try await sendAndAccept(2) == ["e", "f"])
        #expect(try await sendAndAccept(2) == ["a0"])
        #expect(try await sendAndAccept(2) == [])
    }

    @Test func aRowWaitingBeforeTheCursorIsTakenWhenTheBatchHasRoomLeft() async throws {
        for id in ["a", "b", "c"] {
            _ = try await store.write(put(id, [(0, .text(id))]), table: "orders")
        }
        #expect(try await sendAndAccept(2) == ["a", "b"])
        _ = try await store.write(put("a", [(0, .text("again"))]), table: "orders")
        // After "b": "c", then round to "a" in the same batch.
        #expect(try await sendAndAccept(5) == ["c", "a"])
    }
}
