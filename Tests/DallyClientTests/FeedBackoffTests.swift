import DallyClient
import Synchronization
import Testing

/// The feed's retry waits, through an injected sleep: no time passes in this test.
@Suite struct FeedBackoffTests {
    /// The end of the test: thrown by the injected sleep once it has seen enough waits.
    struct Enough: Error {}

    @Test func waitsDoubleUpToTheMaximumAndEachRetryIsReported() async throws {
        let waits = Mutex<[Duration]>([])
        let reported = Mutex<[String]>([])
        let options = ChangeFeed<JSONValue>.Options(
            wait: .seconds(1), retryMinimum: .milliseconds(100), retryMaximum: .milliseconds(500),
            sleep: { pause in
                let count = waits.withLock { waits in
                    waits.append(pause)
                    return waits.count
                }
                if count == 6 { throw Enough() }
            },
            onRetry: { error, _ in reported.withLock { $0.append("\(error)") } })
        // Nothing listens on port 1: every poll is refused at once.
        let client = DallyClient(url: "http://127.0.0.1:1", token: "any-token-0123456789")
        var feed = client.changes(since: 7, options: options).makeAsyncIterator()
        await #expect(throws: Enough.self) { _ = try await feed.next() }
        try await client.shutdown()
        #expect(waits.withLock { $0 } == [100, 200, 400, 500, 500, 500].map { .milliseconds($0) })
        #expect(reported.withLock { $0.count } == 6)
        #expect(reported.withLock { $0.allSatisfy { $0.contains("unreachable") } })
        #expect(feed.cursor == 7)
    }
}
