import Testing

@testable import DallyCore

/// The one wake-up mechanism under the change hub, the notify hub and the engine's signal:
/// keyed versions, waiters parked until a key moves past what they hold. No clock: deadlines
/// are tick numbers expired by hand.
@Suite("VersionWatch")
struct VersionWatchTests {
    /// Yields until `count` waiters are parked (they park asynchronously).
    func parked(_ watch: VersionWatch, _ count: Int) async {
        for _ in 0..<100_000 where watch.waiting != count { await Task.yield() }
        #expect(watch.waiting == count)
    }

    @Test func aKeyAlreadyPastTheHeldVersionAnswersAtOnce() async throws {
        let watch = VersionWatch(versions: ["t": 5])
        #expect(try await watch.wait(Waiter(), holding: ["t": 4], until: nil) == .changed)
        #expect(watch.waiting == 0)
    }

    @Test func aPublishWakesOnlyWaitersItMovesPastTheirVersion() async throws {
        let watch = VersionWatch(versions: ["t": 1, "u": 1])
        async let behind = watch.wait(Waiter(), holding: ["t": 1], until: nil)
        async let ahead = watch.wait(Waiter(), holding: ["t": 3], until: 100)
        async let other = watch.wait(Waiter(), holding: ["u": 1], until: 100)
        await parked(watch, 3)
        watch.publish([("t", 2)])
        #expect(try await behind == .changed)
        await parked(watch, 2)
        watch.publish([("t", 4)])
        #expect(try await ahead == .changed)
        await parked(watch, 1)
        watch.expire(through: 100)
        #expect(try await other == .timeout)
        #expect(watch.versions == ["t": 4, "u": 1])
    }

    @Test func aWaiterOnSeveralKeysIsWokenOnceAndLeavesEveryIndex() async throws {
        let watch = VersionWatch(versions: [:])
        async let end = watch.wait(Waiter(), holding: ["a": 0, "b": 0], until: nil)
        await parked(watch, 1)
        watch.publish([("b", 1), ("a", 1)])
        #expect(try await end == .changed)
        #expect(watch.waiting == 0)
        // Nothing left under "a" to wake twice.
        watch.publish([("a", 2)])
        #expect(watch.waiting == 0)
    }

    @Test func manyWaitersAreWokenByOnePublish() async throws {
        let watch = VersionWatch(versions: [:])
        try await withThrowingTaskGroup(of: LongPollEnd.self) { group in
            for _ in 0..<500 { group.addTask { try await watch.wait(Waiter(), holding: ["t": 0], until: nil) } }
            await parked(watch, 500)
            watch.publish([("t", 1)])
            var ends: [LongPollEnd] = []
            for try await end in group { ends.append(end) }
            #expect(ends.count == 500 && ends.allSatisfy { $0 == .changed })
        }
    }

    @Test func aWaiterWokenBeforeItWaitsReturnsAtOnce() async throws {
        let watch = VersionWatch(versions: [:])
        let waiter = Waiter()
        waiter.resume(.disconnected)
        #expect(try await watch.wait(waiter, holding: ["t": 0], until: nil) == .disconnected)
        #expect(watch.waiting == 0)
    }

    @Test func cancellingTheTaskEndsTheWaitAndUnparksIt() async throws {
        let watch = VersionWatch(versions: [:])
        let task = Task { try await watch.wait(Waiter(), holding: ["t": 0], until: nil) }
        await parked(watch, 1)
        task.cancel()
        #expect(try await task.value == .disconnected)
        #expect(watch.waiting == 0)
    }

    @Test func anOutsideResumeUnparksTheWaiter() async throws {
        let watch = VersionWatch(versions: [:])
        let waiter = Waiter()
        async let end = watch.wait(waiter, holding: ["t": 0], until: nil)
        await parked(watch, 1)
        waiter.resume(.disconnected)
        #expect(try await end == .disconnected)
        #expect(watch.waiting == 0)
    }

    @Test func deadlinesExpireByTickAndNoEarlier() async throws {
        let watch = VersionWatch(versions: [:])
        async let early = watch.wait(Waiter(), holding: ["t": 0], until: 3)
        async let late = watch.wait(Waiter(), holding: ["t": 0], until: 7)
        await parked(watch, 2)
        watch.expire(through: 2)
        #expect(watch.waiting == 2)
        watch.expire(through: 5)
        #expect(try await early == .timeout)
        #expect(watch.waiting == 1)
        watch.expire(through: 7)
        #expect(try await late == .timeout)
    }

    @Test func theLimitRefusesOneMoreWaiter() async throws {
        let watch = VersionWatch(versions: [:], limit: 1)
        async let first = watch.wait(Waiter(), holding: ["t": 0], until: nil)
        await parked(watch, 1)
        await #expect(throws: VersionWatch.Full.self) { try await watch.wait(Waiter(), holding: ["t": 0], until: nil) }
        watch.publish([("t", 1)])
        #expect(try await first == .changed)
    }

    @Test func closingAnswersEveryWaiterAndRefusesToParkMore() async throws {
        let watch = VersionWatch(versions: [:])
        async let a = watch.wait(Waiter(), holding: ["t": 0], until: nil)
        async let b = watch.wait(Waiter(), holding: [:], until: nil)
        await parked(watch, 2)
        watch.close()
        #expect(try await a == .shutdown)
        #expect(try await b == .shutdown)
        #expect(try await watch.wait(Waiter(), holding: ["t": 0], until: nil) == .shutdown)
    }

    @Test func aLowerVersionIsIgnored() async throws {
        let watch = VersionWatch(versions: ["t": 9])
        watch.publish([("t", 3)])
        #expect(watch.latest(of: ["t", "u"]) == 9)
    }
}
