import DallyCore
import ServiceLifecycle

/// Holds the gateways' notify long-polls and wakes them when a table they follow moves past
/// the version they hold (Simba's push-then-pull: the answer carries versions, not rows).
///
/// The mechanism is DallyCore's ``VersionWatch``, as for the gateway's change hub: a commit
/// wakes every matching waiter in one pass; deadlines are expired by one timer loop, not a
/// task per waiter. Generic over `Clock` so tests can drive time. As a `Service` it answers
/// every waiter at graceful shutdown, before the HTTP server drains.
public final class NotifyHub<C: Clock>: Service, Sendable where C.Duration == Duration {
    /// The most waiters parked at once.
    public var limit: Int { watch.limit }
    private let clock: C
    private let ticks: TickClock
    private let watch: VersionWatch

    public init(versions: [String: Int64], limit: Int, clock: C, tick: Duration = .milliseconds(250)) {
        self.clock = clock
        ticks = TickClock(clock: clock, tick: tick)
        watch = VersionWatch(versions: versions, limit: limit)
    }

    public var waiting: Int { watch.waiting }

    /// Records new table versions and wakes the waiters they concern.
    public func publish(_ touched: [String: Int64]) {
        watch.publish(touched.lazy.map { ($0.key, $0.value) })
    }

    /// Waits until a table in `tables` has a version past the one given (which may be the
    /// waiter's own change: the caller checks), `deadline`, or `waiter` is woken from outside
    /// (a gateway that went away).
    ///
    /// - Returns: nil when `limit` waiters are already parked.
    public func wait(_ waiter: Waiter, for tables: [String: Int64], until deadline: C.Instant) async -> LongPollEnd? {
        let deadlineTick = ticks.tick(after: clock.now.duration(to: deadline))
        return try? await watch.wait(waiter, holding: tables, until: deadlineTick)
    }

    public func run() async throws {
        // Answer every waiter at once, before the server starts draining; then stop ticking.
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown {
                await self.ticks.run { self.watch.expire(through: $0) }
            }
        } onGracefulShutdown: {
            self.close()
        }
        close()
    }

    /// Answers every waiter and refuses new ones.
    public func close() { watch.close() }

    /// Whether the hub was closed: the cloud is shutting down.
    public var isClosed: Bool { watch.isClosed }
}
