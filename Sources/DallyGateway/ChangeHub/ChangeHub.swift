import DallyCore
import DallyStore
import ServiceLifecycle
import Synchronization

/// Fans committed changes out to parked long-polls.
///
/// The hub knows the latest local sequence number of every table. A long-poll registers with
/// its cursor; if a table it watches is already past that cursor it is answered at once,
/// otherwise it parks. A commit wakes every waiter of the touched tables in one pass, outside
/// the lock. A waiter costs one small object and an entry in a deadline bucket: one timer loop
/// (``runTimeouts()``) expires all waits, to within ``tick``, so no task or thread is held per
/// waiter.
///
/// As a `Service`, the hub runs that loop and answers every waiter when graceful shutdown
/// begins, so the HTTP server, stopped after it, has no long-poll left to wait for.
public final class ChangeHub: Service, Sendable {
    private struct Registration {
        let waiter: Waiter
        let tables: [String]
    }

    private struct State {
        var latest: [String: Int64]
        var waiters: [String: [UInt64: Registration]] = [:]
        /// Waits by the tick at which they run out: tick number → (id, its first table).
        var deadlines: [Int64: [(id: UInt64, table: String)]] = [:]
        var count = 0
        var nextID: UInt64 = 0
        var closed = false
    }

    private let state: Mutex<State>
    private let sleep: @Sendable (Duration) async throws -> Void
    /// Time since the hub was made, on its clock.
    private let elapsed: @Sendable () -> Duration
    /// The granularity of timeouts: a wait runs out within one tick after its time.
    public let tick: Duration
    private let tickMillis: Int64
    /// The most waiters held at once; one more is refused with `too_many_waiters`.
    public let limit: Int

    /// - Parameters:
    ///   - latest: each table's latest sequence number at start.
    ///   - limit: the most waiters held at once.
    ///   - clock: the clock that times out waits.
    ///   - tick: how often the timer loop looks for waits that ran out.
    public init<C: Clock>(latest: [String: Int64], limit: Int, clock: C, tick: Duration = .milliseconds(250))
    where C.Duration == Duration {
        state = Mutex(State(latest: latest))
        self.limit = limit
        self.tick = tick
        tickMillis = max(1, tick.milliseconds)
        sleep = { try await clock.sleep(for: $0) }
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
    }

    /// How many long-polls are parked now.
    public var waiting: Int { state.withLock { $0.count } }

    /// The latest sequence number among `tables`.
    public func latest(of tables: [String]) -> Int64 {
        state.withLock { state in tables.map { state.latest[$0] ?? 0 }.max() ?? 0 }
    }

    /// Records a commit and wakes every waiter of the tables it touched.
    public func publish(_ notice: ReplicaStore.CommitNotice) {
        let woken: [Waiter] = state.withLock { state in
            var woken: [Waiter] = []
            for (table, seq) in notice.tables {
                if seq > state.latest[table] ?? 0 { state.latest[table] = seq }
                guard let parked = state.waiters.removeValue(forKey: table) else { continue }
                woken.reserveCapacity(woken.count + parked.count)
                for (id, registration) in parked {
                    for other in registration.tables where other != table {
                        state.waiters[other]?.removeValue(forKey: id)
                    }
                    woken.append(registration.waiter)
                }
                state.count -= parked.count
            }
            return woken
        }
        for waiter in woken { waiter.resume(.changed) }
    }

    /// Waits until one of `tables` has a change after `since`, `timeout` passes, or `waiter`
    /// is woken from outside (a disconnect).
    ///
    /// - Throws: ``DallyError`` `too_many_waiters` when the hub holds `limit` waiters already.
    public func wait(
        _ waiter: Waiter, tables: [String], since: Int64, timeout: Duration
    ) async throws(DallyError) -> LongPollEnd {
        let deadlineTick = tickNumber(after: timeout)
        let registered: Result<UInt64?, DallyError> = state.withLock { state in
            if state.closed { waiter.resume(.shutdown); return .success(nil) }
            if tables.contains(where: { state.latest[$0] ?? 0 > since }) {
                waiter.resume(.changed)
                return .success(nil)
            }
            guard state.count < limit else {
                return .failure(
                    DallyError(.tooManyWaiters, "the gateway holds its limit of \(limit) long-polls; retry shortly"))
            }
            guard let first = tables.first else { return .failure(DallyError(.badQuery, "no table to wait on")) }
            let id = state.nextID
            state.nextID += 1
            let registration = Registration(waiter: waiter, tables: tables)
            for table in tables { state.waiters[table, default: [:]][id] = registration }
            state.deadlines[deadlineTick, default: []].append((id, first))
            state.count += 1
            return .success(id)
        }
        guard let id = try registered.get() else { return await waiter.wait() }
        let reason = await withTaskCancellationHandler {
            await waiter.wait()
        } onCancel: {
            waiter.resume(.disconnected)
        }
        if reason == .disconnected { unregister(id, tables: tables) }
        return reason
    }

    /// The tick at the end of which a wait of `timeout` from now has run out (rounded up).
    private func tickNumber(after timeout: Duration) -> Int64 {
        let deadline = (elapsed() + timeout).milliseconds
        return (deadline + tickMillis - 1) / tickMillis
    }

    /// Answers every wait whose time has come with ``LongPollEnd/timeout``.
    func expireWaits() {
        let now = elapsed().milliseconds / tickMillis
        let expired: [Waiter] = state.withLock { state in
            var expired: [Waiter] = []
            for tick in state.deadlines.keys where tick <= now {
                for entry in state.deadlines.removeValue(forKey: tick) ?? [] {
                    guard let registration = state.waiters[entry.table]?[entry.id] else { continue }
                    for table in registration.tables { state.waiters[table]?.removeValue(forKey: entry.id) }
                    state.count -= 1
                    expired.append(registration.waiter)
                }
            }
            return expired
        }
        for waiter in expired { waiter.resume(.timeout) }
    }

    /// Expires waits every ``tick`` until cancelled.
    public func runTimeouts() async {
        while !Task.isCancelled {
            do { try await sleep(tick) } catch { return }
            expireWaits()
        }
    }

    private func unregister(_ id: UInt64, tables: [String]) {
        state.withLock { state in
            var removed = false
            for table in tables where state.waiters[table]?.removeValue(forKey: id) != nil { removed = true }
            if removed { state.count -= 1 }
        }
    }

    /// Answers every waiter with ``LongPollEnd/shutdown`` and refuses to park new ones.
    public func close() {
        let woken: [Waiter] = state.withLock { state in
            state.closed = true
            var seen: Set<UInt64> = []
            var woken: [Waiter] = []
            for parked in state.waiters.values {
                for (id, registration) in parked where seen.insert(id).inserted { woken.append(registration.waiter) }
            }
            state.waiters = [:]
            state.deadlines = [:]
            state.count = 0
            return woken
        }
        for waiter in woken { waiter.resume(.shutdown) }
    }

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
