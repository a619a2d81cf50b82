import Synchronization

/// The objects being received right now (uploads from clients, fetches from the cloud), by
/// the time each began: what keeps GC off their chunks until their manifests are recorded.
///
/// A receiver stores chunks first and records the manifest last, so for a while its chunks
/// are listed by no manifest. The chunk store refreshes a chunk's stored time whenever it is
/// put again, so GC's grace covers chunks a receiver stored or reused recently; this registry
/// covers the rest — a receive that has run longer than the grace — by moving the sweep's
/// cutoff back to the oldest receive still under way.
public final class ObjectIntakes: Sendable {
    private struct State {
        var next = 0
        var started: [Int: Int64] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Runs `body` as a receive that began at `startedAt` (ms since 1970). Callers record the
    /// manifest inside `body`, so that the receive counts until the object is recorded.
    public func receiving<T>(startedAt: Int64, _ body: () async throws -> T) async throws -> T {
        let id = state.withLock { state in
            state.next += 1
            state.started[state.next] = startedAt
            return state.next
        }
        defer { _ = state.withLock { $0.started.removeValue(forKey: id) } }
        return try await body()
    }

    /// When the oldest receive under way began; nil when none is.
    public var oldestStart: Int64? { state.withLock { $0.started.values.min() } }

    /// How many receives are under way.
    public var count: Int { state.withLock { $0.started.count } }
}
