/// Time in ticks since a start, on any `Clock`: what a ``VersionWatch``'s deadlines are
/// counted in, and the one loop that expires them.
///
/// Ticks bound the timer work: one wake per tick whatever the number of waits, at the cost of
/// a wait running out up to one tick late.
///
/// ```swift
/// let ticks = TickClock(clock: ContinuousClock(), tick: .milliseconds(250))
/// let deadline = ticks.tick(after: .seconds(30))
/// await ticks.run { watch.expire(through: $0) }   // until cancelled
/// ```
public struct TickClock: Sendable {
    /// The granularity of deadlines.
    public let tick: Duration
    private let tickMillis: Int64
    private let sleep: @Sendable (Duration) async throws -> Void
    /// Time since the start, on the clock.
    private let elapsed: @Sendable () -> Duration

    /// Ticks of `tick` on `clock`, counted from now.
    public init<C: Clock>(clock: C, tick: Duration) where C.Duration == Duration {
        self.tick = tick
        tickMillis = max(1, tick.milliseconds)
        sleep = { try await clock.sleep(for: $0) }
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
    }

    /// The tick at the end of which `timeout` from now has run out (rounded up).
    public func tick(after timeout: Duration) -> Int64 {
        let deadline = (elapsed() + timeout).milliseconds
        return (deadline + tickMillis - 1) / tickMillis
    }

    /// The tick now (rounded down).
    public var current: Int64 { elapsed().milliseconds / tickMillis }

    /// Calls `expire` with the current tick after every tick, until the task is cancelled.
    public func run(_ expire: (Int64) -> Void) async {
        while !Task.isCancelled {
            do { try await sleep(tick) } catch { return }
            expire(current)
        }
    }
}
