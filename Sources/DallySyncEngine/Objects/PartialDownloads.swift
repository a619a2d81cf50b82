import DallyCompression
import DallyObjects
import Synchronization

/// The beginnings of chunk downloads that were cut, so that the next attempt asks only for
/// the rest (`Range: bytes=<kept>-`) and no byte that crossed the link is paid for twice.
///
/// Kept in memory, within ``limit`` bytes in all (the oldest go first): a chunk is at most a
/// few MiB, and a restart of the gateway starts its downloads afresh. A beginning is taken out
/// for each attempt and put back, longer, if that attempt is cut too.
///
/// ```swift
/// let partials = PartialDownloads()
/// partials.keep(hash, Partial(bytes: firstHalf, coding: .zstd))
/// partials.take(hash)   // the first half, once
/// ```
final class PartialDownloads: Sendable {
    /// The bytes of one chunk's answer received so far, as they were sent (compressed or not).
    struct Partial: Sendable {
        var bytes: [UInt8]
        var coding: ContentCoding
    }

    static let limit = 64 << 20

    private struct State {
        var kept: [ContentHash: Partial] = [:]
        var order: [ContentHash] = []
        var bytes = 0
    }

    private let state = Mutex(State())

    func take(_ hash: ContentHash) -> Partial? {
        state.withLock { state in
            guard let partial = state.kept.removeValue(forKey: hash) else { return nil }
            state.order.removeAll { $0 == hash }
            state.bytes -= partial.bytes.count
            return partial
        }
    }

    func keep(_ hash: ContentHash, _ partial: Partial) {
        guard !partial.bytes.isEmpty, partial.bytes.count <= Self.limit else { return }
        state.withLock { state in
            if let old = state.kept.removeValue(forKey: hash) {
                state.order.removeAll { $0 == hash }
                state.bytes -= old.bytes.count
            }
            while state.bytes + partial.bytes.count > Self.limit, let oldest = state.order.first {
                state.order.removeFirst()
                state.bytes -= state.kept.removeValue(forKey: oldest)?.bytes.count ?? 0
            }
            state.kept[hash] = partial
            state.order.append(hash)
            state.bytes += partial.bytes.count
        }
    }
}
