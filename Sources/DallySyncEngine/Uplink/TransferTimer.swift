/// The clock a transfer is watched on: the engine's injected clock, so that a test moves time
/// by hand and a watchdog never sleeps on the wall clock behind its back.
struct TransferTimer: Sendable {
    /// Sleeps `duration`; throws when the task is cancelled.
    let sleep: @Sendable (Duration) async throws -> Void
    /// Time since a fixed origin on the clock.
    let elapsed: @Sendable () -> Duration

    init(sleep: @escaping @Sendable (Duration) async throws -> Void, elapsed: @escaping @Sendable () -> Duration) {
        self.sleep = sleep
        self.elapsed = elapsed
    }

    /// Sleeps until `elapsed` reads `deadline` (at once when it has passed); false when the
    /// task was cancelled meanwhile.
    func pause(until deadline: Duration) async -> Bool {
        let left = deadline - elapsed()
        guard left > .zero else { return !Task.isCancelled }
        do {
            try await sleep(left)
            return true
        } catch {
            return false
        }
    }

    /// A timer on `clock`, its origin now.
    init<C: Clock>(clock: C) where C.Duration == Duration {
        let origin = clock.now
        self.init(sleep: { try await clock.sleep(for: $0) }, elapsed: { origin.duration(to: clock.now) })
    }
}
