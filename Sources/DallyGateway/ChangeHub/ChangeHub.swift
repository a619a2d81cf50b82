import DallyCore
import DallyStore
import ServiceLifecycle
import Synchronization

/// Fans committed changes out to parked long-polls.
///
/// The hub knows the latest local sequence number of every table. A long-poll registers with
/// its cursor; if a table it watches is already past that cursor it is answered at once,
/// otherwise it parks. A commit wakes every waiter of the touched tables in one pass, outside
/// the lock. A waiter costs one small object and one sleeping timer task; no thread is held.
///
/// As a `Service`, the hub answers every waiter when graceful shutdown begins, so the HTTP
/// server, stopped after it, has no long-poll left to wait for.
public final class ChangeHub: Service, Sendable {
    private struct Registration {
        let waiter: Waiter
        let tables: [String]
    }

    private struct State {
        var latest: [String: Int64]
        var waiters: [String: [UInt64: Registration]] = [:]
        var count = 0
        var nextID: UInt64 = 0
        var closed = false
    }

    private let state: Mutex<State>
    private let sleep: @Sendable (Duration) async throws -> Void
    /// The most waiters held at once; one more is refused with `too_many_waiters`.
    public let limit: Int

    /// - Parameters:
    ///   - latest: each table's latest sequence number at start.
    ///   - limit: the most waiters held at once.
    ///   - clock: the clock that times out waits.
    public init<C: Clock>(latest: [String: Int64], limit: Int, clock: C) where C.Duration == Duration {
        state = Mutex(State(latest: latest))
        self.limit = limit
        sleep = { try await clock.sleep(for: $0) }
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
    ) async throws(DallyError) -> WakeReason {
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
            let id = state.nextID
            state.nextID += 1
            let registration = Registration(waiter: waiter, tables: tables)
            for table in tables { state.waiters[table, default: [:]][id] = registration }
            state.count += 1
            return .success(id)
        }
        guard let id = try registered.get() else { return await waiter.wait() }
        let sleep = self.sleep
        let reason = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await sleep(timeout)
                    waiter.resume(.timeout)
                } catch {}
            }
            let reason = await withTaskCancellationHandler {
                await waiter.wait()
            } onCancel: {
                waiter.resume(.disconnected)
            }
            group.cancelAll()
            return reason
        }
        if reason != .changed { unregister(id, tables: tables) }
        return reason
    }

    private func unregister(_ id: UInt64, tables: [String]) {
        state.withLock { state in
            var removed = false
            for table in tables where state.waiters[table]?.removeValue(forKey: id) != nil { removed = true }
            if removed { state.count -= 1 }
        }
    }

    /// Answers every waiter with ``WakeReason/shutdown`` and refuses to park new ones.
    public func close() {
        let woken: [Waiter] = state.withLock { state in
            state.closed = true
            var seen: Set<UInt64> = []
            var woken: [Waiter] = []
            for parked in state.waiters.values {
                for (id, registration) in parked where seen.insert(id).inserted { woken.append(registration.waiter) }
            }
            state.waiters = [:]
            state.count = 0
            return woken
        }
        for waiter in woken { waiter.resume(.shutdown) }
    }

    /// Runs until graceful shutdown begins, then answers every waiter.
    public func run() async throws {
        try? await gracefulShutdown()
        close()
    }
}
