import Testing

@testable import DallySyncEngine

/// The uploads of a walk round, without a cloud: each upload waits for a gate the test opens,
/// so the order they land in is the test's.
@Suite("ChunksOnTheWire")
struct ChunksOnTheWireTests {
    /// A gate an upload waits behind; `open` lets it return its bytes, or fail.
    final class Gate: Sendable {
        let stream: AsyncStream<Result<Int, TestFailure>>
        let continuation: AsyncStream<Result<Int, TestFailure>>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }
        func open(_ result: Result<Int, TestFailure>) { continuation.yield(result) }
        func pass() async throws -> Int {
            for await result in stream { return try result.get() }
            throw CancellationError()
        }
    }

    struct TestFailure: Error, Equatable {}

    /// A walk round with one upload behind each gate, started in order.
    func started(_ gates: Gate...) -> ChunksOnTheWire {
        var wire = ChunksOnTheWire()
        for gate in gates { wire.start { try await gate.pass() } }
        return wire
    }

    @Test func aLaterChunkLandingFirstFreesItsSlotAndIsSettledAfterTheEarlierOne() async throws {
        let first = Gate()
        let second = Gate()
        var wire = started(first, second)
        defer { wire.cancelAll() }
        #expect(wire.going == 2)

        second.open(.success(20))
        try await wire.awaitLanding()
        // A slot is free, but nothing is settled out of order.
        #expect(wire.going == 1)
        #expect(try await wire.settleIfLanded() == nil)

        first.open(.success(10))
        try await wire.awaitLanding()
        #expect(try await wire.settleIfLanded() == 10)
        #expect(try await wire.settleIfLanded() == 20)
        #expect(wire.isEmpty && wire.going == 0)
    }

    @Test func settlingTheOldestWaitsForIt() async throws {
        let first = Gate()
        let second = Gate()
        var wire = started(first, second)
        defer { wire.cancelAll() }
        second.open(.success(2))
        first.open(.success(1))
        #expect(try await wire.settleOldest() == 1)
        #expect(try await wire.settleOldest() == 2)
        #expect(wire.isEmpty)
    }

    @Test func aLaterChunkThatFailsIsReportedAsItLandsNotBehindTheEarlierOne() async throws {
        let first = Gate()
        let second = Gate()
        var wire = started(first, second)
        second.open(.failure(TestFailure()))
        await #expect(throws: TestFailure()) { try await wire.awaitLanding() }
        wire.cancelAll()
    }

    @Test func anAdoptedUploadIsCancelledWithTheWalk() async throws {
        let outside = Task<Int, any Error> {
            try await Task.sleep(for: .seconds(600))
            return 1
        }
        var wire = ChunksOnTheWire()
        wire.adopt(outside)
        wire.cancelAll()
        await #expect(throws: CancellationError.self) { try await outside.value }
    }
}
