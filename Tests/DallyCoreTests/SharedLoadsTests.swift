import DallyCore
import Synchronization
import Testing

@Suite("SharedLoads: one load for every caller at one generation")
struct SharedLoadsTests {
    /// Counts loads, and holds each until released, so that callers pile up on one.
    final class Loader: Sendable {
        let loads = Atomic<Int>(0)
        let gate = AsyncStream<Void>.makeStream()

        func load(_ value: Int) async throws -> Int {
            loads.add(1, ordering: .relaxed)
            for await _ in gate.stream { break }
            return value
        }
    }

    @Test func callersArrivingDuringALoadShareIt() async throws {
        let loads = SharedLoads<String, Int>()
        let loader = Loader()
        let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            group.addTask { try await loads.value(for: "k", generation: 1) { try await loader.load(7) } }
            // The first caller is loading before the others ask.
            while loader.loads.load(ordering: .relaxed) == 0 { await Task.yield() }
            for _ in 0..<20 {
                group.addTask { try await loads.value(for: "k", generation: 1) { try await loader.load(99) } }
            }
            // Let the joiners park, then release the one load.
            for _ in 0..<100 { await Task.yield() }
            loader.gate.continuation.yield()
            loader.gate.continuation.finish()
            var results: [(Int, Bool)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(loader.loads.load(ordering: .relaxed) == 1)
        #expect(results.allSatisfy { $0.0 == 7 })
        #expect(results.filter { !$0.1 }.count == 1)
    }

    @Test func aNewGenerationLoadsAgainAndAnOldValueIsNotServed() async throws {
        let loads = SharedLoads<String, Int>()
        #expect(try await loads.value(for: "k", generation: 1) { 1 } == (1, false))
        #expect(try await loads.value(for: "k", generation: 1) { 2 } == (1, true))
        #expect(try await loads.value(for: "k", generation: 2) { 3 } == (3, false))
        #expect(try await loads.value(for: "other", generation: 2) { 4 } == (4, false))
    }

    @Test func aFailedLoadIsNotKeptTheNextCallerLoads() async throws {
        struct Refused: Error {}
        let loads = SharedLoads<String, Int>()
        await #expect(throws: Refused.self) { try await loads.value(for: "k", generation: 1) { throw Refused() } }
        #expect(try await loads.value(for: "k", generation: 1) { 5 } == (5, false))
    }

    @Test func pastTheCapacityFinishedEntriesAreDropped() async throws {
        let loads = SharedLoads<Int, Int>(capacity: 4)
        for key in 0..<10 { _ = try await loads.value(for: key, generation: 1) { key } }
        // Key 0 was dropped with the others once the table was full: it loads again.
        #expect(try await loads.value(for: 0, generation: 1) { 100 } == (100, false))
    }
}
