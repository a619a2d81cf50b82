import Synchronization

/// Shares one load among the callers that ask for the same thing at the same time.
///
/// When one write wakes ten thousand long-polls parked on the same cursor, or one change
/// wakes every gateway of a fleet, they all want the same page. The first to ask loads it; the
/// others wait for that load and reuse its result. An entry is keyed by `Key` and valid for one
/// *generation* (a version the caller reads before asking, such as the table's latest commit):
/// a newer generation makes it stale, and the next caller loads again.
///
/// ```swift
/// let pages = SharedLoads<String, [UInt8]>()
/// let (bytes, shared) = try await pages.value(for: "orders@41", generation: 42) {
///     try await readPage("orders", since: 41)   // runs once for every caller at generation 42
/// }
/// ```
public final class SharedLoads<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private enum Entry {
        case loading(generation: Int64)
        case ready(generation: Int64, value: Value)
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Callers waiting for a value being loaded. Kept apart from `entries` so that each
        /// join appends in place: thousands join one load at once.
        var joined: [Key: [CheckedContinuation<Value, any Error>]] = [:]
    }

    private enum Decision {
        case hit(Value)
        case join
        case load
    }

    private let state = Mutex(State())
    private let capacity: Int

    /// At most `capacity` entries are kept; past that, the finished ones are dropped.
    public init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The value for `key` at `generation`, loading it with `load` if nobody has; and whether
    /// it came from another caller's load.
    public func value(
        for key: Key, generation: Int64, load: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, shared: Bool) {
        let decision: Decision = state.withLock { state in
            switch state.entries[key] {
            case .ready(let g, let value) where g == generation: return .hit(value)
            case .loading(let g) where g == generation: return .join
            default:
                if state.entries.count >= capacity {
                    state.entries = state.entries.filter { if case .loading = $0.value { true } else { false } }
                }
                state.entries[key] = .loading(generation: generation)
                return .load
            }
        }
        switch decision {
        case .hit(let value):
            return (value, true)
        case .join:
            let value = try await withCheckedThrowingContinuation { continuation in
                let late: Value?? = state.withLock { state in
                    switch state.entries[key] {
                    case .loading(let g) where g == generation:
                        state.joined[key, default: []].append(continuation)
                        return nil
                    case .ready(let g, let value) where g == generation:
                        return .some(value)
                    default:
                        return .some(nil)  // the loader failed or was replaced: load ourselves
                    }
                }
                guard let late else { return }
                if let value = late {
                    continuation.resume(returning: value)
                } else {
                    Task { continuation.resume(with: await Result(catching: { try await load() })) }
                }
            }
            return (value, true)
        case .load:
            let result = await Result(catching: { try await load() })
            let joined: [CheckedContinuation<Value, any Error>] = state.withLock { state in
                guard case .loading(let g) = state.entries[key], g == generation else { return [] }
                if case .success(let value) = result {
                    state.entries[key] = .ready(generation: generation, value: value)
                } else {
                    state.entries[key] = nil
                }
                return state.joined.removeValue(forKey: key) ?? []
            }
            for continuation in joined { continuation.resume(with: result) }
            return (try result.get(), false)
        }
    }
}

extension Result where Failure == any Error {
    /// The result of `body`, success or error.
    public init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
