import Synchronization

/// Parks waiters until a key they watch moves past the version they hold, their time runs
/// out, their task is cancelled, or the watch closes: the one wake-up mechanism behind the
/// gateway's change long-polls (`ChangeHub`, keys are tables, versions sequence numbers), the
/// cloud's notify long-polls (`NotifyHub`, versions are table versions) and the sync engine's
/// availability signal.
///
/// A publish wakes every matching waiter in one pass, outside the lock, reaching only the
/// waiters of the keys it touched. Deadlines are tick numbers in buckets: one timer loop (see
/// ``TickClock``) expires them all, so no task is held per waiter.
///
/// ```swift
/// let watch = VersionWatch(versions: ["orders": 41], limit: 10_000)
/// let waiter = Waiter()
/// async let end = watch.wait(waiter, holding: ["orders": 41], until: ticks.tick(after: .seconds(30)))
/// watch.publish([("orders", 42)])   // end == .changed
/// ```
public final class VersionWatch: Sendable {
    /// A wait refused because `limit` waiters are parked already.
    public struct Full: Error {}

    private struct Registration {
        let waiter: Waiter
        /// Per key watched, the version the waiter holds (a list: waiters watch a few keys).
        let held: [(key: String, version: Int64)]
    }

    /// A parked waiter, for ``leave(_:)``.
    public struct Parking: Sendable {
        fileprivate let id: UInt64
    }

    private struct State {
        var versions: [String: Int64]
        var byKey: [String: [UInt64: Registration]] = [:]
        var registrations: [UInt64: Registration] = [:]
        /// Waits by the tick at which they run out.
        var deadlines: [Int64: [UInt64]] = [:]
        var nextID: UInt64 = 0
        var closed = false

        mutating func remove(_ id: UInt64) -> Registration? {
            guard let registration = registrations.removeValue(forKey: id) else { return nil }
            for entry in registration.held { byKey[entry.key]?.removeValue(forKey: id) }
            return registration
        }
    }

    /// The most waiters parked at once.
    public let limit: Int
    private let state: Mutex<State>

    /// - Parameters:
    ///   - versions: each key's version at start (a key not named is at 0).
    ///   - limit: the most waiters parked at once; one more is refused with ``Full``.
    public init(versions: [String: Int64], limit: Int = .max) {
        self.limit = limit
        state = Mutex(State(versions: versions))
    }

    /// How many waiters are parked now.
    public var waiting: Int { state.withLock { $0.registrations.count } }

    /// The version of every key.
    public var versions: [String: Int64] { state.withLock { $0.versions } }

    /// The highest version among `keys`.
    public func latest(of keys: [String]) -> Int64 {
        state.withLock { state in keys.map { state.versions[$0] ?? 0 }.max() ?? 0 }
    }

    /// Records new versions (a lower one than known is ignored) and wakes every waiter of a
    /// key that moved past the version it holds.
    public func publish(_ versions: some Sequence<(String, Int64)>) {
        let woken: [Waiter] = state.withLock { state in
            var woken: [Waiter] = []
            for (key, version) in versions {
                if version > state.versions[key] ?? 0 { state.versions[key] = version }
                // Taken out whole (no copy of a dictionary of thousands while it is changed),
                // and the waiters still behind put back.
                guard let parked = state.byKey.removeValue(forKey: key) else { continue }
                woken.reserveCapacity(woken.count + parked.count)
                var kept: [UInt64: Registration] = [:]
                for (id, registration) in parked {
                    guard version > (registration.held.first { $0.key == key }?.version ?? 0) else {
                        kept[id] = registration
                        continue
                    }
                    state.registrations.removeValue(forKey: id)
                    for entry in registration.held where entry.key != key {
                        state.byKey[entry.key]?.removeValue(forKey: id)
                    }
                    woken.append(registration.waiter)
                }
                if !kept.isEmpty { state.byKey[key] = kept }
            }
            return woken
        }
        for waiter in woken { waiter.resume(.changed) }
    }

    /// Waits until a key of `held` has a version past the one held, tick `deadline` has been
    /// expired (nil: no deadline), `waiter` is woken from outside (a disconnect), the task is
    /// cancelled, or the watch closes. Answers at once when a key is past already, or the
    /// watch is closed.
    ///
    /// - Throws: ``Full`` when `limit` waiters are parked already.
    public func wait(_ waiter: Waiter, holding held: [String: Int64], until deadline: Int64?) async throws(Full)
        -> LongPollEnd
    {
        guard let parking = try park(waiter, holding: held.map { ($0.key, $0.value) }, until: deadline) else {
            return await waiter.wait()
        }
        let end = await withTaskCancellationHandler {
            await waiter.wait()
        } onCancel: {
            waiter.resume(.disconnected)
        }
        if end == .disconnected { leave(parking) }
        return end
    }

    /// The first half of ``wait(_:holding:until:)``, for a caller that awaits `waiter` itself
    /// (one async frame less per parked long-poll, which thousands of them feel): parks it, or
    /// resumes it at once and returns nil when a key is past already or the watch is closed.
    /// A caller whose waiter ends `.disconnected` calls ``leave(_:)``.
    ///
    /// - Throws: ``Full`` when `limit` waiters are parked already.
    public func park(_ waiter: Waiter, holding held: [(String, Int64)], until deadline: Int64?) throws(Full) -> Parking? {
        let registered: Result<UInt64?, Full> = state.withLock { state in
            if state.closed {
                waiter.resume(.shutdown)
                return .success(nil)
            }
            if held.contains(where: { state.versions[$0.0] ?? 0 > $0.1 }) {
                waiter.resume(.changed)
                return .success(nil)
            }
            guard state.registrations.count < limit else { return .failure(Full()) }
            let id = state.nextID
            state.nextID += 1
            let registration = Registration(waiter: waiter, held: held.map { (key: $0.0, version: $0.1) })
            state.registrations[id] = registration
            for (key, _) in held { state.byKey[key, default: [:]][id] = registration }
            if let deadline { state.deadlines[deadline, default: []].append(id) }
            return .success(id)
        }
        return try registered.get().map(Parking.init(id:))
    }

    /// Takes a waiter that went away out of the watch; nothing when something else woke it.
    public func leave(_ parking: Parking) {
        _ = state.withLock { $0.remove(parking.id) }
    }

    /// Answers every wait whose deadline tick is `tick` or earlier with ``LongPollEnd/timeout``.
    public func expire(through tick: Int64) {
        let expired: [Waiter] = state.withLock { state in
            var expired: [Waiter] = []
            for due in state.deadlines.keys where due <= tick {
                for id in state.deadlines.removeValue(forKey: due) ?? [] {
                    if let registration = state.remove(id) { expired.append(registration.waiter) }
                }
            }
            return expired
        }
        for waiter in expired { waiter.resume(.timeout) }
    }

    /// Whether ``close()`` was called: no waiter parks any more.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Answers every waiter with ``LongPollEnd/shutdown`` and refuses to park new ones.
    public func close() {
        let all: [Waiter] = state.withLock { state in
            state.closed = true
            defer {
                state.registrations = [:]
                state.byKey = [:]
                state.deadlines = [:]
            }
            return state.registrations.values.map(\.waiter)
        }
        for waiter in all { waiter.resume(.shutdown) }
    }
}
