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

    // A batch that took a row in flight would be refused by its record and read again, for
    // ever: bounded, so that such a mistake fails instead of hanging.
    @Test(.timeLimit(.minutes(1))) func rowsInFlightAreNeverTakenAgainOnEitherSideOfTheCursor() async throws {
        // Batches on the wire (as a pipelined drain keeps them), named so that the store
        // builds new ones instead of offering them again.
        var flying: Set<String> = []
        func next(_ rows: Int) async throws -> (batch: OutgoingBatch?, ids: [String]) {
            let batch = try await store.nextBatch(gateway: "gw", maxRows: rows, excluding: flying)
            if let batch { flying.insert(batch.batchID) }
            return (batch, try batch.map { try sentRequest($0).sections.flatMap { $0.changes.map(\.id) } } ?? [])
        }
        for id in ["a", "b", "c", "d", "e", "f"] {
            _ = try await store.write(put(id, [(0, .text(id))]), table: "orders")
        }
        let first = try await next(2)
        #expect(first.ids == ["a", "b"])
        // Written again while in flight: it waits for the answer before it goes again.
        _ = try await store.write(put("a", [(0, .text("again"))]), table: "orders")
        #expect(try await next(2).ids == ["c", "d"])
        let firstBatch = try #require(first.batch)
        _ = try await store.applyAnswer(
            replicaAnswer(firstBatch, [.accepted(id: "a", version: 1), .accepted(id: "b", version: 2)]))
        flying.remove(firstBatch.batchID)
        // After "d", then around to "a" (its new write, no longer in flight); "c" and "d" fly.
        #expect(try await next(10).ids == ["e", "f", "a"])
        // The cursor is at "a" now, below rows in flight ("c" to "f"): they are not taken
        // again; "b", written again, and "g", above every id in flight, are.
        for id in ["b", "g"] {
            _ = try await store.write(put(id, [(0, .text(id + "2"))]), table: "orders")
        }
        #expect(try await next(10).ids == ["b", "g"])
        #expect(try await next(10).ids == [])
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
