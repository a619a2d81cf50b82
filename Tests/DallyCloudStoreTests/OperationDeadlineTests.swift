import DallyClocks
import DallyTestSupport
import Synchronization
@testable import DallyCloudPostgres
import Testing

/// The bound on one database operation: a result that comes in time is returned, an operation
/// that never ends is answered with the timeout's error and cancelled, and the caller's
/// cancellation reaches the operation. Time is a manual clock's: the tests move it past a
/// deadline or a check instead of waiting for it.
@Suite struct OperationDeadlineTests {
    struct TimedOut: Error {}

    @Test func anOperationThatEndsInTimeGivesItsResult() async throws {
        let deadline = OperationDeadline(limit: .seconds(600), clock: ManualClock())
        let value = try await deadline.run(onTimeout: { TimedOut() }) { 42 }
        #expect(value == 42)
    }

    @Test func anOperationsErrorReachesTheCaller() async throws {
        struct Refused: Error {}
        let deadline = OperationDeadline(limit: .seconds(600), clock: ManualClock())
        await #expect(throws: Refused.self) {
            try await deadline.run(onTimeout: { TimedOut() }) { throw Refused() }
        }
    }

    /// An operation that ignores cancellation's error, as the stuck wait did, and tells
    /// `signal` when it is cancelled: only the deadline, or a reason to give up, ends the
    /// caller's wait.
    static func neverEnding(telling signal: AsyncStream<Void>.Continuation) async -> Int {
        await withTaskCancellationHandler {
            let (never, feed) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            withExtendedLifetime(feed) {}
        } onCancel: {
            signal.yield()
        }
        return 0
    }

    /// Whether `cancelled` has been told once.
    static func told(_ cancelled: AsyncStream<Void>) async -> Bool {
        for await _ in cancelled { return true }
        return false
    }

    /// How long a test waits for a task to be scheduled before it counts as never: generous,
    /// as the whole suite in parallel on two cores can hold the cooperative pool for seconds.
    static let patience = Duration.seconds(120)

    /// How `caller` ended. One still waiting after ``patience``, as it would behind a deadline
    /// or a check that never fires, is cancelled, and ends with its operation's own result:
    /// the test then fails on that instead of hanging.
    static func outcome<T: Sendable>(of caller: Task<T, any Error>) async -> Result<T, any Error> {
        let watchdog = Task {
            try await Task.sleep(for: patience)
            caller.cancel()
        }
        defer { watchdog.cancel() }
        return await caller.result
    }

    /// Waits until the deadline's timer sleeps on `clock` (it starts beside the operation).
    static func timerAsleep(on clock: ManualClock) async -> Bool {
        await eventually(within: patience) { clock.sleeping == 1 }
    }

    @Test func anOperationThatNeverEndsIsAnsweredAtTheDeadlineAndCancelled() async throws {
        let clock = ManualClock()
        let (cancelled, signal) = AsyncStream<Void>.makeStream()
        let caller = Task {
            try await OperationDeadline(limit: .seconds(20), clock: clock).run(onTimeout: { TimedOut() }) {
                await Self.neverEnding(telling: signal)
            }
        }
        #expect(await Self.timerAsleep(on: clock))
        clock.advance(by: .seconds(19))
        // Short of the limit the timer sleeps on and the caller still waits.
        #expect(clock.sleeping == 1)
        clock.advance(by: .seconds(1))
        await #expect(throws: TimedOut.self) { try await Self.outcome(of: caller).get() }
        #expect(await Self.told(cancelled))
    }

    @Test func theCallersCancellationReachesTheOperation() async throws {
        let caller = Task {
            try await OperationDeadline(limit: .seconds(600), clock: ManualClock()).run(onTimeout: { TimedOut() }) {
                // Waits until cancelled: a stream nobody feeds ends its loop only then.
                let (never, feed) = AsyncStream<Void>.makeStream()
                for await _ in never {}
                withExtendedLifetime(feed) {}
                try Task.checkCancellation()
                return 0
            }
        }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
    }
}

extension OperationDeadlineTests {
    struct ConnectionClosed: Error {}

    @Test func anOperationIsGivenUpOnAtTheFirstCheckAfterItsReasonAppearsNotAtTheDeadline() async throws {
        let clock = ManualClock()
        let closed = Mutex(false)
        let (cancelled, signal) = AsyncStream<Void>.makeStream()
        let caller = Task {
            try await OperationDeadline(limit: .seconds(3_600), checkInterval: .seconds(1), clock: clock).run(
                onTimeout: { TimedOut() }, giveUp: { closed.withLock { $0 } ? ConnectionClosed() : nil }
            ) {
                await Self.neverEnding(telling: signal)
            }
        }
        // A check with no reason yet: the timer sleeps again.
        #expect(await Self.timerAsleep(on: clock))
        clock.advance(by: .seconds(1))
        #expect(await Self.timerAsleep(on: clock))
        closed.withLock { $0 = true }
        // The next check, an hour before the deadline, gives up with the reason's own error.
        clock.advance(by: .seconds(1))
        await #expect(throws: ConnectionClosed.self) { try await Self.outcome(of: caller).get() }
        #expect(await Self.told(cancelled))
    }

    @Test func aReasonToGiveUpThatNeverAppearsLeavesTheOperationAlone() async throws {
        // The operation ends once `giveUp` has been asked three times and found nothing (or,
        // with fewer, when cancelled).
        let clock = ManualClock()
        let (asked, tell) = AsyncStream<Void>.makeStream()
        let deadline = OperationDeadline(limit: .seconds(600), checkInterval: .seconds(1), clock: clock)
        let caller = Task {
            try await deadline.run(onTimeout: { TimedOut() }, giveUp: { tell.yield(); return nil }) {
                var times = 0
                for await _ in asked {
                    times += 1
                    if times == 3 { break }
                }
                return times
            }
        }
        for _ in 1...3 {
            #expect(await Self.timerAsleep(on: clock))
            clock.advance(by: .seconds(1))
        }
        #expect(try await Self.outcome(of: caller).get() == 3)
    }
}
