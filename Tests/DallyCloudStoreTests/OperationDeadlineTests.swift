import Synchronization
@testable import DallyCloudPostgres
import Testing

/// The bound on one database operation: a result that comes in time is returned, an operation
/// that never ends is answered with the timeout's error and cancelled, and the caller's
/// cancellation reaches the operation.
@Suite struct OperationDeadlineTests {
    struct TimedOut: Error {}

    @Test func anOperationThatEndsInTimeGivesItsResult() async throws {
        let value = try await OperationDeadline(limit: .seconds(600)).run(onTimeout: { TimedOut() }) { 42 }
        #expect(value == 42)
    }

    @Test func anOperationsErrorReachesTheCaller() async throws {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await OperationDeadline(limit: .seconds(600)).run(onTimeout: { TimedOut() }) { throw Refused() }
        }
    }

    /// An operation that ignores cancellation's error, as the stuck wait did, and tells
    /// `signal` when it is cancelled: only the deadline, or a reason to give up, ends the
    /// caller's wait.
    static func neverEnding(telling signal: AsyncStream<Void>.Continuation) async -> Int {
        await withTaskCancellationHandler {
            try? await Task.sleep(for: .seconds(3_600))
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

    @Test func anOperationThatNeverEndsIsAnsweredAtTheDeadlineAndCancelled() async throws {
        let (cancelled, signal) = AsyncStream<Void>.makeStream()
        await #expect(throws: TimedOut.self) {
            try await OperationDeadline(limit: .milliseconds(20)).run(onTimeout: { TimedOut() }) {
                await Self.neverEnding(telling: signal)
            }
        }
        #expect(await Self.told(cancelled))
    }

    @Test func theCallersCancellationReachesTheOperation() async throws {
        let caller = Task {
            try await OperationDeadline(limit: .seconds(600)).run(onTimeout: { TimedOut() }) {
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

    @Test func anOperationIsGivenUpOnAsSoonAsItsReasonAppearsNotAtTheDeadline() async throws {
        let closed = Mutex(false)
        let (cancelled, signal) = AsyncStream<Void>.makeStream()
        // A deadline no test run reaches: only `giveUp` can end the wait, with its own error.
        await #expect(throws: ConnectionClosed.self) {
            try await OperationDeadline(limit: .seconds(3_600), checkInterval: .milliseconds(1)).run(
                onTimeout: { TimedOut() }, giveUp: { closed.withLock { $0 } ? ConnectionClosed() : nil }
            ) {
                closed.withLock { $0 = true }
                return await Self.neverEnding(telling: signal)
            }
        }
        #expect(await Self.told(cancelled))
    }

    @Test func aReasonToGiveUpThatNeverAppearsLeavesTheOperationAlone() async throws {
        // The operation ends only once `giveUp` has been asked three times and found nothing.
        let (asked, tell) = AsyncStream<Void>.makeStream()
        let deadline = OperationDeadline(limit: .seconds(600), checkInterval: .milliseconds(1))
        let value = try await deadline.run(onTimeout: { TimedOut() }, giveUp: { tell.yield(); return nil }) {
            var times = 0
            for await _ in asked {
                times += 1
                if times == 3 { break }
            }
            return 7
        }
        #expect(value == 7)
    }
}
