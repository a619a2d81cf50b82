import AsyncHTTPClient
import DallyCore
import Foundation
import DallyClocks
import Testing

/// Long-polls through real HTTP: fan-out, disconnects, limits, timeouts, shutdown, restart.
@Suite("End to end: long-poll and lifecycle")
struct LongPollEndToEndTests {
    /// Waits, boundedly, for the gateway to hold `count` long-polls.
    func parked(_ gw: LiveGateway, _ count: Int) async throws {
        for _ in 0..<2_000 where gw.hub.waiting != count {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(gw.hub.waiting == count)
    }

    @Test func twoHundredLongPollersAreAllWokenByOneWrite() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            try await withThrowingTaskGroup(of: LiveGateway.Reply.self) { group in
                for _ in 0..<200 {
                    group.addTask { try await gw.send(.GET, "/v1/tables/orders/changes?since=0&wait=60") }
                }
                try await parked(gw, 200)
                #expect(try await gw.stats()["waiters"]?["current"]?.int == 200)
                _ = try await gw.send(.PUT, "/v1/tables/orders/rows/wake", body: #"{"values":{"qty":1}}"#)
                var answered = 0
                for try await reply in group {
                    #expect(reply.status == 200)
                    #expect(reply.json["changes"]?.array?.first?["id"] == "wake")
                    #expect(reply.json["next_since"]?.int == 1)
                    answered += 1
                }
                #expect(answered == 200)
            }
            #expect(gw.hub.waiting == 0)
        }
    }

    @Test func aWriteToAnotherTableWakesNobody() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            async let poll = gw.send(.GET, "/v1/tables/orders/changes?since=0&wait=60")
            try await parked(gw, 1)
            _ = try await gw.send(.PUT, "/v1/tables/notes/rows/n", body: #"{"values":{}}"#)
            #expect(gw.hub.waiting == 1)
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/o", body: #"{"values":{}}"#)
            #expect(try await poll.json["changes"]?.array?.first?["id"] == "o")
        }
    }

    @Test func aDisconnectingWaiterIsDroppedAtOnce() async throws {
        try await LiveGateway.run(LiveGateway.config()) { gw in
            let poll = Task { try await gw.send(.GET, "/v1/tables/orders/changes?since=0&wait=60") }
            try await parked(gw, 1)
            poll.cancel()
            _ = await poll.result
            try await parked(gw, 0)
        }
    }

    @Test func pastMaxWaitersTheAnswerIs503WithRetryAfter() async throws {
        try await LiveGateway.run(LiveGateway.config(extra: "max_waiters = 2")) { gw in
            async let first = gw.send(.GET, "/v1/tables/orders/changes?since=0&wait=60")
            async let second = gw.send(.GET, "/v1/tables/orders/changes?since=0&wait=60")
            try await parked(gw, 2)
            let third = try await gw.send(.GET, "/v1/tables/orders/changes?since=0&wait=60")
            #expect(third.status == 503)
            #expect(third.errorCode == "too_many_waiters")
            #expect(third.headers["Retry-After"].first == "1")
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/o", body: #"{"values":{}}"#)
            #expect(try await first.status == 200)
            #expect(try await second.status == 200)
        }
    }

    @Test func anUnansweredWaitRunsOutOnTheInjectedClockWithTheSameCursor() async throws {
        let clock = ManualClock()
        try await LiveGateway.run(LiveGateway.config(), clock: clock) { gw in
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/o", body: #"{"values":{}}"#)
            async let poll = gw.send(.GET, "/v1/tables/orders/changes?since=1&wait=30")
            try await parked(gw, 1)
            for _ in 0..<2_000 where clock.sleeping == 0 { try await Task.sleep(for: .milliseconds(5)) }
            clock.advance(by: .seconds(30))
            let reply = try await poll
            #expect(reply.status == 200)
            #expect(reply.json["changes"] == [])
            #expect(reply.json["next_since"]?.int == 1)
        }
    }

    @Test func gracefulShutdownAnswersEveryWaiter() async throws {
        let config = try LiveGateway.config()
        let replies = try await LiveGateway.run(config) { gw in
            let polls = (0..<20).map { _ in Task { try await gw.send(.GET, "/v1/tables/orders/changes?since=0&wait=120") } }
            try await parked(gw, 20)
            gw.hub.close()
            var replies: [LiveGateway.Reply] = []
            for poll in polls { replies.append(try await poll.value) }
            return replies
        }
        #expect(replies.count == 20)
        #expect(replies.allSatisfy { $0.status == 200 && $0.json["changes"] == [] })
    }

    @Test func aRestartKeepsRowsTombstonesOutboxAndCursors() async throws {
        let directory = LiveGateway.temporaryDirectory()
        let cursor = try await LiveGateway.run(LiveGateway.config(dataDirectory: directory)) { gw in
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/a", body: #"{"values":{"customer":"Ada"}}"#)
            _ = try await gw.send(.PUT, "/v1/tables/orders/rows/b", body: #"{"values":{}}"#)
            _ = try await gw.send(.DELETE, "/v1/tables/orders/rows/b")
            return try await gw.send(.GET, "/v1/tables/orders/changes?since=0&limit=1").json["next_since"]?.int
        }
        #expect(cursor == 1)
        try await LiveGateway.run(LiveGateway.config(dataDirectory: directory)) { gw in
            #expect(try await gw.send(.GET, "/v1/tables/orders/rows/a").json["values"]?["customer"] == "Ada")
            let rest = try await gw.send(.GET, "/v1/tables/orders/changes?since=1")
            #expect((rest.json["changes"]?.array ?? []).map { $0["id"] } == ["b"])
            #expect(rest.json["changes"]?.array?.first?["deleted"] == true)
            let stats = try await gw.stats()
            #expect(stats["tables"]?["orders"]?["outbox_pending"]?.int == 2)
            #expect(stats["tables"]?["orders"]?["tombstones"]?.int == 1)
            #expect(try await gw.send(.PUT, "/v1/tables/orders/rows/c", body: #"{"values":{}}"#).json["seq"]?.int == 4)
        }
    }
}
