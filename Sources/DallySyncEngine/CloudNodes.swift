import Synchronization

/// The cloud nodes one uplink can reach (its `url` list), and which one requests go to now.
///
/// Requests go to the first node. When a node does not answer (connection refused, reset,
/// timed out) or answers that it cannot serve now (502, 503, 504), requests move to the next
/// node in the list, round and round. After ``returnAfter`` away from the first node, the next
/// request tries it again: it is the one the operator prefers (the nearest, say). A batch
/// being sent when a node fails is resent, with the same id, to whichever node is in use by
/// then; the cloud applies a batch id once whichever node gets it.
final class CloudNodes: Sendable {
    let urls: [String]
    /// Each node's ``ListenerCheck``, read from its URL once.
    let checks: [String: ListenerCheck]
    /// How long requests stay away from the first node once they left it.
    let returnAfter: Duration
    private let state: Mutex<State>

    private struct State {
        var current = 0
        /// When requests left the first node; nil while on it.
        var leftFirstAt: ContinuousClock.Instant?
    }

    /// - Parameter urls: at least one base URL; the first is preferred.
    init(urls: [String], returnAfter: Duration = .seconds(60)) {
        self.urls = urls.isEmpty ? [""] : urls
        self.returnAfter = returnAfter
        checks = Dictionary(self.urls.compactMap { url in ListenerCheck(url: url).map { (url, $0) } }) { first, _ in first }
        state = Mutex(State())
    }

    /// The base URL to send the next request to.
    func current(now: ContinuousClock.Instant = .now) -> String {
        state.withLock { state in
            if let left = state.leftFirstAt, now - left >= returnAfter {
                state.current = 0
                state.leftFirstAt = nil
            }
            return urls[state.current]
        }
    }

    /// Moves on from the node at `url` when it is still the one in use (a request that failed
    /// on a node already left behind moves nothing). Returns the node to use now.
    @discardableResult
    func failed(_ url: String, now: ContinuousClock.Instant = .now) -> String {
        state.withLock { state in
            guard urls.count > 1, urls[state.current] == url else { return urls[state.current] }
            state.current = (state.current + 1) % urls.count
            if state.current == 0 {
                state.leftFirstAt = nil
            } else if state.leftFirstAt == nil {
                state.leftFirstAt = now
            }
            return urls[state.current]
        }
    }
}
