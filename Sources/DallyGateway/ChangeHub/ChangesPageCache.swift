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
        case loading(generation: Int64, waiting: [CheckedContinuation<ByteBuffer, any Error>])
        case ready(generation: Int64, page: ByteBuffer)
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int

    init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// The page for `key` at `generation`, loading it with `load` if nobody has.
    func page(
        key: String, generation: Int64, load: @escaping @Sendable () async throws -> ByteBuffer
    ) async throws -> ByteBuffer {
        enum Decision {
            case hit(ByteBuffer)
            case join
            case load
        }
        let decision: Decision = entries.withLock { entries in
            switch entries[key] {
            case .ready(let g, let page) where g == generation: return .hit(page)
            case .loading(let g, _) where g == generation: return .join
            default:
                if entries.count >= capacity { entries = entries.filter { if case .loading = $0.value { true } else { false } } }
                entries[key] = .loading(generation: generation, waiting: [])
                return .load
            }
        }
        switch decision {
        case .hit(let page):
            return page
        case .join:
            return try await withCheckedThrowingContinuation { continuation in
                let late: ByteBuffer?? = entries.withLock { entries in
                    switch entries[key] {
                    case .loading(let g, var waiting) where g == generation:
                        waiting.append(continuation)
                        entries[key] = .loading(generation: g, waiting: waiting)
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
            let waiting: [CheckedContinuation<ByteBuffer, any Error>] = entries.withLock { entries in
                guard case .loading(let g, let waiting) = entries[key], g == generation else { return [] }
                if case .success(let page) = result {
                    entries[key] = .ready(generation: generation, page: page)
                } else {
                    entries[key] = nil
                }
                return waiting
            }
            for continuation in waiting { continuation.resume(with: result) }
            return try result.get()
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
