import Logging
import Synchronization

/// The cloud nodes one uplink can reach (its `url` list), and which one requests go to now.
///
/// Requests go to the first node. When a node does not answer (connection refused, reset,
/// timed out) or answers that it cannot serve now (502, 503, 504), requests move to the next
/// node in the list, round and round. After ``returnAfter`` away from the first node, the next
/// request tries it again: it is the one the operator prefers (the nearest, say). A batch
/// being sent when a node fails is resent, with the same id, to whichever node is in use by
/// then; the cloud applies a batch id once whichever node gets it.
///
/// Each move is counted, and logged (a warning on leaving a node, a notice on going back to the
/// first) until requests have been once round the list without a node answering: an operator
/// sees a node lost before the last one is (a gateway that moved on syncs as before, with no
/// failure of its own to show for it), and a cloud down as a whole, which the uplink's
/// availability already tells, adds no line per probe.
final class CloudNodes: Sendable {
    let urls: [String]
    /// Each node's ``ListenerCheck``, read from its URL once.
    let checks: [String: ListenerCheck]
    /// How long requests stay away from the first node once they left it.
    let returnAfter: Duration
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var current = 0
        /// When requests left the first node; nil while on it.
        var leftFirstAt: ContinuousClock.Instant?
        /// Times requests moved on from a node that failed.
        var moves: Int64 = 0
        /// Moves since a node last answered: from the list's length on, moves are not logged.
        var movesUnanswered = 0
    }

    /// - Parameters:
    ///   - urls: at least one base URL; the first is preferred.
    ///   - logger: where moves are told, with the uplink's name in its metadata.
    init(urls: [String], returnAfter: Duration = .seconds(60), logger: Logger = Logger(label: "dally.gateway")) {
        self.urls = urls.isEmpty ? [""] : urls
        self.returnAfter = returnAfter
        self.logger = logger
        checks = Dictionary(self.urls.compactMap { url in ListenerCheck(url: url).map { (url, $0) } }) { first, _ in first }
        state = Mutex(State())
    }

    /// The base URL to send the next request to.
    func current(now: ContinuousClock.Instant = .now) -> String {
        let (url, tell) = state.withLock { state in
            guard let left = state.leftFirstAt, now - left >= returnAfter else { return (urls[state.current], false) }
            state.current = 0
            state.leftFirstAt = nil
            return (urls[0], state.movesUnanswered < urls.count)
        }
        if tell {
            logger.notice("requests go back to the first cloud node", metadata: ["node": "\(url)"])
        }
        return url
    }

    /// A node answered: the next moves are told again.
    func answered() {
        state.withLock { $0.movesUnanswered = 0 }
    }

    /// The node requests go to now and how many times they moved on from a failed node.
    var position: (node: String, moves: Int64) {
        state.withLock { (urls[$0.current], $0.moves) }
    }

    /// Moves on from the node at `url` when it is still the one in use (a request that failed
    /// on a node already left behind moves nothing). Returns the node to use now.
    @discardableResult
    func failed(_ url: String, now: ContinuousClock.Instant = .now) -> String {
        let (next, tell) = state.withLock { state in
            guard urls.count > 1, urls[state.current] == url else { return (urls[state.current], false) }
            state.current = (state.current + 1) % urls.count
            state.moves += 1
            state.movesUnanswered += 1
            if state.current == 0 {
                state.leftFirstAt = nil
            } else if state.leftFirstAt == nil {
                state.leftFirstAt = now
            }
            return (urls[state.current], state.movesUnanswered <= urls.count)
        }
        if tell {
            logger.warning(
                "a cloud node did not answer or cannot serve: requests go to the next",
                metadata: ["failed": "\(url)", "node": "\(next)"])
        }
        return next
    }
}
