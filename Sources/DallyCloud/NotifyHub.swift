import ServiceLifecycle
import Synchronization

/// Holds the gateways' notify long-polls and wakes them when a table they follow moves past
/// the version they hold (Simba's push-then-pull: the answer carries versions, not rows).
///
/// A commit wakes every matching waiter in one pass; deadlines are checked by one timer loop,
/// not a task per waiter. Generic over `Clock` so tests can drive time. As a `Service` it
/// answers every waiter at graceful shutdown, before the HTTP server drains.
public final class NotifyHub<C: Clock>: Service, Sendable where C.Duration == Duration {
    public enum Wake: Sendable, Equatable {
        /// A followed table moved past the waiter's version (which may be the waiter's own
        /// change: the caller checks).
        case changed
        case timeout
        case disconnected
        case shutdown
    }

    private final class Waiter: Sendable {
        let tables: [String: Int64]
        let deadline: C.Instant
        let continuation: Mutex<CheckedContinuation<Wake?, Never>?>

        init(tables: [String: Int64], deadline: C.Instant, continuation: CheckedContinuation<Wake?, Never>) {
            self.tables = tables
            self.deadline = deadline
            self.continuation = Mutex(continuation)
        }

        func resume(_ wake: Wake) {
            continuation.withLock { $0.take() }?.resume(returning: wake)
        }
    }

    private struct State {
        var versions: [String: Int64]
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        /// Tickets cancelled before their wait registered.
        var cancelled: Set<UInt64> = []
        var closed = false
    }

    public let limit: Int
    private let clock: C
    private let tick: Duration
    private let state: Mutex<State>

    public init(versions: [String: Int64], limit: Int, clock: C, tick: Duration = .milliseconds(250)) {
        self.limit = limit
        self.clock = clock
        self.tick = tick
        self.state = Mutex(State(versions: versions))
    }

    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Records new table versions and wakes the waiters they concern.
    public func publish(_ touched: [String: Int64]) {
        let woken: [Waiter] = state.withLock { state in
            for (table, version) in touched { state.versions[table] = max(state.versions[table] ?? 0, version) }
            var woken: [Waiter] = []
            for (id, waiter) in state.waiters
            where waiter.tables.contains(where: { table, held in (touched[table] ?? 0) > held }) {
                state.waiters[id] = nil
                woken.append(waiter)
            }
            return woken
        }
        for waiter in woken { waiter.resume(.changed) }
    }

    /// A ticket for one wait, taken before it starts so that ``cancel(_:)`` can end it from
    /// a disconnect handler at any time.
    public func ticket() -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
    }

    /// Waits until a table in `tables` has a version past the one given, or `deadline`.
    ///
    /// - Returns: nil when `limit` waiters are already parked.
    public func wait(ticket: UInt64, for tables: [String: Int64], until deadline: C.Instant) async -> Wake? {
        defer { state.withLock { _ = $0.cancelled.remove(ticket) } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Wake?, Never>) in
                let waiter = Waiter(tables: tables, deadline: deadline, continuation: continuation)
                let refused: Wake?? = state.withLock { state in
                    if state.closed { return .some(.shutdown) }
                    if state.cancelled.contains(ticket) { return .some(.disconnected) }
                    if tables.contains(where: { (state.versions[$0.key] ?? 0) > $0.value }) { return .some(.changed) }
                    guard state.waiters.count < limit else { return .some(nil) }
                    state.waiters[ticket] = waiter
                    return nil
                }
                if let refused { continuation.resume(returning: refused) }
            }
        } onCancel: {
            cancel(ticket)
        }
    }

    /// Ends the wait of `ticket` early, for a gateway that went away; safe before, during
    /// or after the wait.
    public func cancel(_ ticket: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiters.removeValue(forKey: ticket) else {
                state.cancelled.insert(ticket)
                return nil
            }
            return waiter
        }
        waiter?.resume(.disconnected)
    }

    public func run() async throws {
        // Answer every waiter at once, before the server starts draining; then stop ticking.
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    do { try await self.clock.sleep(for: self.tick) } catch { break }
                    self.expire(now: self.clock.now)
                }
            }
        } onGracefulShutdown: {
            self.close()
        }
        close()
    }

    /// Answers every waiter whose deadline has passed.
    func expire(now: C.Instant) {
        let expired: [Waiter] = state.withLock { state in
            var expired: [Waiter] = []
            for (id, waiter) in state.waiters where waiter.deadline <= now {
                state.waiters[id] = nil
                expired.append(waiter)
            }
            return expired
        }
        for waiter in expired { waiter.resume(.timeout) }
    }

    /// Answers every waiter and refuses new ones.
    public func close() {
        let all: [Waiter] = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in all { waiter.resume(.shutdown) }
    }
}
