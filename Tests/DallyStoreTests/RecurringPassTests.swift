import DallyClocks
import Logging
import Synchronization
import Testing

@testable import DallyStore

/// Upkeep passes run on the injected clock: one per interval, a failed one retried at the next.
@Suite struct RecurringPassTests {
    @Test func passesRunEveryIntervalOnTheClockAndAFailureDoesNotStopThem() async throws {
        let clock = ManualClock()
        let runs = Mutex(0)
        let upkeep = RecurringPass("test", every: .seconds(60), clock: clock, logger: Logger(label: "test")) {
            let run = runs.withLock { count -> Int in
                count += 1
                return count
            }
            if run == 2 { throw StoreError("a failing pass") }
        }
        let task = Task { try await upkeep.run() }
        // Nothing runs before the first interval.
        while clock.sleeping == 0 { await Task.yield() }
        #expect(runs.withLock { $0 } == 0)
        for expected in 1...3 {
            clock.advance(by: .seconds(60))
            while runs.withLock({ $0 }) < expected || clock.sleeping == 0 { await Task.yield() }
            #expect(runs.withLock { $0 } == expected)
        }
        task.cancel()
        _ = try? await task.value
    }

    @Test func aPassAtStartRunsBeforeTheFirstInterval() async throws {
        let clock = ManualClock()
        let runs = Mutex(0)
        let upkeep = RecurringPass("test", every: .seconds(3600), atStart: true, clock: clock, logger: Logger(label: "test")) {
            runs.withLock { $0 += 1 }
        }
        // What the service lifecycle logs for it at start.
        #expect("\(upkeep)" == "test every 1h, first at start")
        let task = Task { try await upkeep.run() }
        while clock.sleeping == 0 { await Task.yield() }
        #expect(runs.withLock { $0 } == 1)
        task.cancel()
        _ = try? await task.value
    }
}
