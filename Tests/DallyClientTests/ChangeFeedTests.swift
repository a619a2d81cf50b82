import DallyClient
import DallyTestSupport
import Foundation
import Synchronization
import Testing

/// The changes feed as an `AsyncSequence`: every change once, in order, across a gateway
/// restart, from a saved cursor.
@Suite struct ChangeFeedTests {
    /// A feed that retries fast, and tells the test each time it does.
    static func options(retries: AsyncStream<Void>.Continuation? = nil) -> ChangeFeed<Order>.Options {
        ChangeFeed<Order>.Options(
            wait: .seconds(2), pageSize: 3, retryMinimum: .milliseconds(20), retryMaximum: .milliseconds(200),
            onRetry: { _, _ in retries?.yield() })
    }

    /// The next `count` changes, and the iterator after them.
    static func take(_ count: Int, from iterator: ChangeFeed<Order>.Iterator) async throws
        -> ([Row<Order>], ChangeFeed<Order>.Iterator)
    {
        var iterator = iterator
        var rows: [Row<Order>] = []
        for _ in 0..<count { rows.append(try #require(try await iterator.next())) }
        return (rows, iterator)
    }

    @Test func followsChangesAcrossAGatewayRestart() async throws {
        try await ClientSystem.run { system in
            let (retries, retried) = AsyncStream<Void>.makeStream()
            // Its own client: the writer's is shut down while the gateway is down and back.
            try await system.with { watcher in
                let orders = watcher.table("orders", as: Order.self)
                for i in 1...5 { try await orders.put(id: "o\(i)", Order(total: Double(i))) }
                var feed = orders.changes(since: 0, options: Self.options(retries: retried)).makeAsyncIterator()
                var seen: [Row<Order>] = []
                for _ in 1...5 { seen.append(try #require(try await feed.next())) }
                #expect(seen.map(\.id) == ["o1", "o2", "o3", "o4", "o5"])

                // Down: the feed's next poll fails and it retries, until the gateway is back on
                // the same port with the same replica.
                try await system.live.stopGateway("gw-a")
                let stopped = feed
                async let more = Self.take(5, from: stopped)
                var iterator = retries.makeAsyncIterator()
                _ = await iterator.next()
                try await system.startGateway("gw-a", samePort: true)
                try await system.with { writer in
                    let orders = writer.table("orders", as: Order.self)
                    for i in 6...8 { try await orders.put(id: "o\(i)", Order(total: Double(i))) }
                    try await orders.patch(id: "o1", Payment(paid: true))
                    try await orders.delete(id: "o2")
                }
                let (rest, after) = try await more
                seen += rest
                feed = after
                #expect(seen.map(\.id) == ["o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o1", "o2"])
                #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.seq < $1.seq })
                #expect(seen[8].values?.paid == true)
                #expect(seen[9].deleted)
                #expect(feed.cursor == seen[9].seq)
            }
        }
    }

    @Test func startsFromASavedCursorAndSeesWritesAsTheyHappen() async throws {
        try await ClientSystem.run { system in
            try await system.with { client in
                let orders = client.table("orders", as: Order.self)
                let saved = try await orders.put(id: "a", Order(customer: "old")).seq
                // The app saved `saved` as its cursor and restarts: it sees only what came after.
                let feed = orders.changes(since: saved, options: Self.options()).makeAsyncIterator()
                async let next = Self.take(1, from: feed)
                try await orders.put(id: "b", Order(customer: "new"))
                let change = try #require(try await next.0.first)
                #expect(change.id == "b")
                #expect(change.values?.customer == "new")
            }
        }
    }

    /// A scoped token's page passes over the rows it may not see; the next poll starts past
    /// them (`next_since`), not at the last row the token saw, which read them all again.
    @Test func aScopedFeedPollsOnFromWhereItsLastPageEnded() async throws {
        try await ClientSystem.run { system in
            let last = try await system.with { client in
                var seq: Int64 = 0
                for i in 0..<30 { seq = try await client.table("orders").put(id: "bea-\(i)", ["customer": "Bea"]).seq }
                return seq
            }
            let transport = ShapingTransport()
            try await system.with(token: ClientSystem.scopedToken, transport: transport) { client in
                let feed = client.table("orders").changes(options: .init(wait: .seconds(1)))
                let following = Task {
                    for try await _ in feed {}
                }
                let polled = await eventually(within: .seconds(30)) { transport.requests.count >= 2 }
                following.cancel()
                #expect(polled)
                let sinces = transport.requests.prefix(2).map { request in
                    URLComponents(string: request.url)?.queryItems?.first { $0.name == "since" }?.value
                }
                #expect(sinces == ["0", "\(last)"])
            }
        }
    }

    @Test func acrossTablesEachChangeNamesItsTable() async throws {
        try await ClientSystem.run { system in
            try await system.with { client in
                try await client.table("orders").put(id: "o1", ["customer": "Ada"])
                try await client.table("notes").put(id: "n1", ["body": "hello"])
                var feed = client.changes(tables: ["orders", "notes"], options: .init(wait: .seconds(1))).makeAsyncIterator()
                let first = try #require(try await feed.next())
                let second = try #require(try await feed.next())
                #expect([first.table, second.table] == ["orders", "notes"])
                #expect(second.values?["body"] == "hello")
            }
        }
    }

    @Test func aRefusalEndsTheFeed() async throws {
        try await ClientSystem.run { system in
            try await system.with(token: ClientSystem.readerToken) { reader in
                var feed = reader.changes(tables: ["notes"], options: .init(wait: .seconds(1))).makeAsyncIterator()
                await #expect(throws: DallyClientError.self) { _ = try await feed.next() }
            }
        }
    }

    /// A cursor the gateway cannot follow (here: ahead of every change it holds, as one saved
    /// before its data was restored from an older backup) ends the feed with a refusal the app
    /// can tell apart, as docs/CLIENT.md shows.
    @Test func aCursorTheGatewayCannotFollowEndsTheFeedWithResyncRequired() async throws {
        try await ClientSystem.run { system in
            try await system.with { client in
                let orders = client.table("orders", as: Order.self)
                let saved = try await orders.put(id: "a", Order(customer: "Ada")).seq
                var feed = orders.changes(since: saved + 1_000, options: Self.options()).makeAsyncIterator()
                do {
                    _ = try await feed.next()
                    Issue.record("the feed went on from a cursor ahead of the gateway")
                } catch let error as DallyClientError where error.code == .resyncRequired {
                    #expect(error.status == 409)
                }
            }
        }
    }
}
