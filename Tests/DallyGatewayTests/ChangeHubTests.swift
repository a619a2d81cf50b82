import DallyCore
import DallyStore
import DallyClocks
import Testing

@testable import DallyGateway

@Suite("ChangeHub")
struct ChangeHubTests {
    let clock = ManualClock()

    func notice(_ table: String, _ seq: Int64) -> ReplicaStore.CommitNotice {
        ReplicaStore.CommitNotice(tables: [table: seq], lastSeq: seq)
    }

    /// Waits (bounded) until the hub holds `count` waiters.
    func parked(_ hub: ChangeHub, _ count: Int) async {
        for _ in 0..<10_000 where hub.waiting != count { await Task.yield() }
    }

    @Test func aWaiterBehindTheLatestSequenceIsAnsweredAtOnce() async throws {
        let hub = ChangeHub(latest: ["t": 5], limit: 10, clock: clock)
        #expect(try await hub.wait(Waiter(), tables: ["t"], since: 4, timeout: .seconds(30)) == .changed)
        #expect(hub.waiting == 0)
    }

    @Test func oneCommitWakesEveryWaiterOfThatTableAndNoOther() async throws {
        let hub = ChangeHub(latest: ["t": 0, "u": 0], limit: 1000, clock: clock)
        let other = Waiter()
        async let otherReason = hub.wait(other, tables: ["u"], since: 0, timeout: .seconds(30))
        let reasons = try await withThrowingTaskGroup(of: LongPollEnd.self) { group in
            for _ in 0..<300 { group.addTask { try await hub.wait(Waiter(), tables: ["t"], since: 0, timeout: .seconds(30)) } }
            await parked(hub, 301)
            #expect(hub.waiting == 301)
            hub.publish(notice("t", 1))
            return try await group.reduce(into: [LongPollEnd]()) { $0.append($1) }
        }
        #expect(reasons.count == 300)
        #expect(reasons.allSatisfy { $0 == .changed })
        #expect(hub.waiting == 1)
        other.resume(.disconnected)
        #expect(try await otherReason == .disconnected)
        #expect(hub.waiting == 0)
    }

    /// Waits (bounded) until the timer loop is asleep on the manual clock, i.e. has handled
    /// the last advance.
    func timerAsleep() async {
        for _ in 0..<10_000 where clock.sleeping != 1 { await Task.yield() }
    }

    @Test func aWaitRunsOutOnlyWhenTheClockPassesItsTimeout() async throws {
        let hub = ChangeHub(latest: ["t": 0], limit: 10, clock: clock, tick: .seconds(1))
        let timer = Task { await hub.runTimeouts() }
        defer { timer.cancel() }
        async let reason = hub.wait(Waiter(), tables: ["t"], since: 0, timeout: .seconds(30))
        await parked(hub, 1)
        await timerAsleep()
        clock.advance(by: .seconds(29))
        await timerAsleep()
        #expect(hub.waiting == 1)
        clock.advance(by: .seconds(1))
        #expect(try await reason == .timeout)
        #expect(hub.waiting == 0)
    }

    @Test func waitsRunOutTogetherOnOneTimerAndOthersKeepWaiting() async throws {
        let hub = ChangeHub(latest: ["t": 0], limit: 1000, clock: clock, tick: .seconds(1))
        let timer = Task { await hub.runTimeouts() }
        defer { timer.cancel() }
        let long = Waiter()
        async let longReason = hub.wait(long, tables: ["t"], since: 0, timeout: .seconds(60))
        let reasons = try await withThrowingTaskGroup(of: LongPollEnd.self) { group in
            for _ in 0..<100 { group.addTask { try await hub.wait(Waiter(), tables: ["t"], since: 0, timeout: .seconds(10)) } }
            await parked(hub, 101)
            await timerAsleep()
            // One sleeping timer, whatever the number of waiters.
            #expect(clock.sleeping == 1)
            clock.advance(by: .seconds(10))
            return try await group.reduce(into: [LongPollEnd]()) { $0.append($1) }
        }
        #expect(reasons.count == 100 && reasons.allSatisfy { $0 == .timeout })
        #expect(hub.waiting == 1)
        long.resume(.disconnected)
        #expect(try await longReason == .disconnected)
        #expect(hub.waiting == 0)
    }

    @Test func aMultiTableWaiterIsWokenOnceAndRemovedFromEveryTable() async throws {
        let hub = ChangeHub(latest: ["a": 0, "b": 0], limit: 10, clock: clock)
        async let reason = hub.wait(Waiter(), tables: ["a", "b"], since: 0, timeout: .seconds(30))
        await parked(hub, 1)
        hub.publish(ReplicaStore.CommitNotice(tables: ["a": 1, "b": 2], lastSeq: 2))
        #expect(try await reason == .changed)
        #expect(hub.waiting == 0)
    }

    @Test func pastTheLimitAWaitIsRefused() async throws {
        let hub = ChangeHub(latest: ["t": 0], limit: 1, clock: clock)
        let first = Waiter()
        async let firstReason = hub.wait(first, tables: ["t"], since: 0, timeout: .seconds(30))
        await parked(hub, 1)
        await #expect(throws: DallyError.self) { try await hub.wait(Waiter(), tables: ["t"], since: 0, timeout: .seconds(30)) }
        first.resume(.disconnected)
        _ = try await firstReason
    }

    @Test func closeAnswersEveryWaiterAndRefusesToParkMore() async throws {
        let hub = ChangeHub(latest: ["t": 0], limit: 10, clock: clock)
        async let a = hub.wait(Waiter(), tables: ["t"], since: 0, timeout: .seconds(30))
        async let b = hub.wait(Waiter(), tables: ["t"], since: 0, timeout: .seconds(30))
        await parked(hub, 2)
        hub.close()
        #expect(try await a == .shutdown)
        #expect(try await b == .shutdown)
        #expect(try await hub.wait(Waiter(), tables: ["t"], since: 0, timeout: .seconds(30)) == .shutdown)
    }
}
