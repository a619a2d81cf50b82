import Synchronization
import Testing

@testable import DallySyncEngine

/// ``ConnectionOrder/start(_:)`` returns once the request is queued, not when it ends, and
/// does not wait for a notice that never comes when the request fails first.
@Suite("ConnectionOrder")
struct ConnectionOrderTests {
    /// The body calls the notice, then waits on a gate only the test opens after `start`
    /// returned: a `start` that waited for the body's end would never return (the time limit
    /// fails it).
    @Test(.timeLimit(.minutes(1))) func startReturnsOnceTheRequestIsQueuedNotWhenItEnds() async throws {
        let (gate, opening) = AsyncStream<Void>.makeStream()
        let task = await ConnectionOrder.start { queued -> Int in
            queued()
            for await _ in gate {}
            return 7
        }
        opening.finish()
        #expect(try await task.value == 7)
    }

    @Test(.timeLimit(.minutes(1))) func aRequestThatFailsBeforeItIsQueuedLetsTheNextOneGo() async {
        struct ChunkLost: Error {}
        let task = await ConnectionOrder.start { _ -> Int in throw ChunkLost() }
        await #expect(throws: ChunkLost.self) { try await task.value }
    }

    /// What ran first: the notice, or the code after `start` (the next request).
    @Test(.timeLimit(.minutes(1))) func theNextRequestStartsAfterTheNoticeWhateverTheBodyDoesFirst() async throws {
        let order = Mutex<[String]>([])
        let task = await ConnectionOrder.start { queued -> Int in
            // Work before the request reaches the client (reading and compressing a chunk).
            for _ in 0..<10 { await Task.yield() }
            order.withLock { $0.append("queued") }
            queued()
            return 1
        }
        order.withLock { $0.append("next") }
        _ = try await task.value
        #expect(order.withLock { $0 } == ["queued", "next"])
    }
}
