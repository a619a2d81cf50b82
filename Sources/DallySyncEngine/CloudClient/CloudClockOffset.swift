import Logging
import Synchronization

/// How far the gateway's clock is from the cloud's, read from the `Date` header of the
/// cloud's answers (whole seconds, so within about a second and a round trip).
///
/// A gateway stamps its rows' changes (`updated_at`), counts deadlines, retention and
/// tombstone ages by its own clock. One that runs behind loses the last-writer-wins conflicts
/// it should win, and one that runs ahead has its stamps replaced by the cloud (PROTOCOL.md
/// §5); neither can be seen from the rows alone. So the offset is in `/stats` and `/metrics`,
/// and a warning is logged when it passes ``warningMs`` (and a note when it comes back).
final class CloudClockOffset: Sendable {
    /// An offset beyond which the log warns: well past what NTP keeps, and the cloud's default
    /// `max_clock_ahead`.
    static let warningMs: Int64 = 60_000

    private struct State {
        var offsetMs: Int64?
        var warned = false
    }

    private let state = Mutex(State())
    private let now: @Sendable () -> Int64
    private let logger: Logger

    /// - Parameter now: the gateway's wall clock, milliseconds since 1970.
    init(now: @escaping @Sendable () -> Int64, logger: Logger) {
        self.now = now
        self.logger = logger
    }

    /// The cloud's clock less the gateway's, in milliseconds; nil until an answer had a `Date`.
    var milliseconds: Int64? { state.withLock { $0.offsetMs } }

    /// Notes the `Date` of an answer that just arrived.
    func heard(date: String?) {
        guard let date, let cloud = HTTPDate.milliseconds(date) else { return }
        // The header drops the milliseconds: the cloud's clock was somewhere in that second.
        let offset = cloud + 500 - now()
        let change: Bool? = state.withLock { state in
            state.offsetMs = offset
            let far = abs(offset) > Self.warningMs
            guard far != state.warned else { return nil }
            state.warned = far
            return far
        }
        switch change {
        case true?:
            logger.warning(
                "this gateway's clock is off from the cloud's: set it (NTP); changes are stamped, and deadlines, retention and tombstone ages counted, by it",
                metadata: ["cloud_minus_gateway_s": "\(offset / 1000)"])
        case false?:
            logger.info("this gateway's clock agrees with the cloud's again", metadata: ["cloud_minus_gateway_s": "\(offset / 1000)"])
        case nil:
            break
        }
    }
}
