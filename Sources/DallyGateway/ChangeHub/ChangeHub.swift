import DallyCore
import DallyStore
import ServiceLifecycle

/// Fans committed changes out to parked long-polls.
///
/// The hub knows the latest local sequence number of every table. A long-poll registers with
/// its cursor; if a table it watches is already past that cursor it is answered at once,
/// otherwise it parks. A commit wakes every waiter of the touched tables in one pass, outside
/// the lock. A waiter costs one small object and an entry in a deadline bucket: one timer loop
/// (``runTimeouts()``) expires all waits, to within ``tick``, so no task or thread is held per
/// waiter. The mechanism is DallyCore's ``VersionWatch``, which the cloud's notify hub shares.
///
/// As a `Service`, the hub runs that loop and answers every waiter when graceful shutdown
/// begins, so the HTTP server, stopped after it, has no long-poll left to wait for.
public final class ChangeHub: Service, Sendable {
    /// Waiters by table; versions are the tables' latest sequence numbers.
    private let watch: VersionWatch
    private let ticks: TickClock
    /// The granularity of timeouts: a wait runs out within one tick after its time.
    public var tick: Duration { ticks.tick }
    /// The most waiters held at once; one more is refused with `too_many_waiters`.
    public var limit: Int { watch.limit }

    /// - Parameters:
    ///   - latest: each table's latest sequence number at start.
    ///   - limit: the most waiters held at once.
    ///   - clock: the clock that times out waits.
    ///   - tick: how often the timer loop looks for waits that ran out.
    public init<C: Clock>(latest: [String: Int64], limit: Int, clock: C, tick: Duration = .milliseconds(250))
    where C.Duration == Duration {
        watch = VersionWatch(versions: latest, limit: limit)
        ticks = TickClock(clock: clock, tick: tick)
    }

    /// How many long-polls are parked now.
    public var waiting: Int { watch.waiting }

    /// The latest sequence number among `tables`.
    public func latest(of tables: [String]) -> Int64 { watch.latest(of: tables) }

    /// Records a commit and wakes every waiter of the tables it touched.
    public func publish(_ notice: ReplicaStore.CommitNotice) {
        watch.publish(notice.tables.lazy.map { ($0.key, $0.value) })
    }

    /// Waits until one of `tables` has a change after `since`, `timeout` passes, or `waiter`
    /// is woken from outside (a disconnect).
    ///
    /// - Throws: ``DallyError`` `too_many_waiters` when the hub holds `limit` waiters already.
    public func wait(
        _ waiter: Waiter, tables: [String], since: Int64, timeout: Duration
    ) async throws(DallyError) -> LongPollEnd {
        guard !tables.isEmpty else { throw DallyError(.badQuery, "no table to wait on") }
        let parking: VersionWatch.Parking?
        do {
            parking = try watch.park(waiter, holding: tables.map { ($0, since) }, until: ticks.tick(after: timeout))
        } catch {
            throw DallyError(.tooManyWaiters, "the gateway holds its limit of \(limit) long-polls; retry shortly")
        }
        guard let parking else { return await waiter.wait() }
        let reason = await withTaskCancellationHandler {
            await waiter.wait()
        } onCancel: {
            waiter.resume(.disconnected)
        }
        if reason == .disconnected { watch.leave(parking) }
        return reason
    }

    /// Answers every wait whose time has come with ``LongPollEnd/timeout``.
    func expireWaits() { watch.expire(through: ticks.current) }

    /// Expires waits every ``tick`` until cancelled.
    public func runTimeouts() async {
        await ticks.run { watch.expire(through: $0) }
    }

    /// Answers every waiter with ``LongPollEnd/shutdown`` and refuses to park new ones.
    public func close() { watch.close() }

    /// Expires waits until graceful shutdown begins, then answers every waiter.
    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.runTimeouts() }
            try? await gracefulShutdown()
            close()
            group.cancelAll()
        }
    }
}
