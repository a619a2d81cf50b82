import NIOCore
import Synchronization

/// Shares one encoded changes page among the long-polls that ask for the same thing.
///
/// When one write wakes ten thousand waiters parked on the same cursor, they all want the same
/// page. The first to ask reads it from the store; the others wait for that read and reuse its
/// bytes. An entry is keyed by (tables, cursor, limit) and valid for one *generation*, the
/// hub's latest sequence of those tables when it was read: a newer commit makes it stale.
final class ChangesPageCache: Sendable {
    private enum Entry {
        case loading(generation: Int64)
        case ready(generation: Int64, page: CachedPage)
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Callers waiting for a page being loaded. Kept apart from `entries` so that each
        /// join appends in place: thousands join one load at once.
        var joined: [String: [CheckedContinuation<CachedPage, any Error>]] = [:]
    }

    private let state = Mutex(State())
    private let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The page for `key` at `generation`, loading it with `load` if nobody has.
    func page(
        key: String, generation: Int64, load: @escaping @Sendable () async throws -> CachedPage
    ) async throws -> CachedPage {
        enum Decision {
            case hit(CachedPage)
            case join
            case load
        }
        let decision: Decision = state.withLock { state in
            switch state.entries[key] {
            case .ready(let g, let page) where g == generation: return .hit(page)
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
        case .hit(let page):
            return page
        case .join:
            return try await withCheckedThrowingContinuation { continuation in
                let late: CachedPage?? = state.withLock { state in
                    switch state.entries[key] {
                    case .loading(let g) where g == generation:
                        state.joined[key, default: []].append(continuation)
                        return nil
                    case .ready(let g, let page) where g == generation:
                        return .some(page)
                    default:
                        return .some(nil)  // the loader failed or was replaced: load ourselves
                    }
                }
                guard let late else { return }
                if let page = late {
                    continuation.resume(returning: page)
                } else {
                    Task { continuation.resume(with: await Result(catching: { try await load() })) }
                }
            }
        case .load:
            let result = await Result(catching: { try await load() })
            let joined: [CheckedContinuation<CachedPage, any Error>] = state.withLock { state in
                guard case .loading(let g) = state.entries[key], g == generation else { return [] }
                if case .success(let page) = result {
                    state.entries[key] = .ready(generation: generation, page: page)
                } else {
                    state.entries[key] = nil
                }
                return state.joined.removeValue(forKey: key) ?? []
            }
            for continuation in joined { continuation.resume(with: result) }
            return try result.get()
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
