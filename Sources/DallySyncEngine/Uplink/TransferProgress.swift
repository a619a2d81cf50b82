import DallyConfig
import Synchronization

/// What one watched transfer has moved and when, and the rules that say it has stalled.
///
/// Times are on the watch's clock (``TransferTimer``). A transfer is in one of three phases:
/// sending its body, waiting for the answer (the body all handed to the connection), or
/// receiving the answer. It has stalled when:
///
/// - **idle**: no byte has moved for `idle_timeout`, plus the time the bytes a connection's
///   buffers may hold (``bufferAllowance``, at most the body) take at the link's drain rate —
///   a sender sees its bytes leave in bursts of a buffer's size, not byte by byte — plus, while
///   waiting for the answer, the quiet time the request expects (a long-poll's wait);
/// - **slow**: over a whole `min_rate_window` of sending or receiving it moved fewer than
///   `min_rate` bytes per second;
/// - **over its bound**: it has run longer than `request_timeout` (and the quiet time) plus
///   its bytes at a quarter of the drain rate (never slower than `min_rate`): the bound follows
///   the request's size and the measured link.
final class TransferProgress: Sendable {
    /// The bytes a connection's buffers (the HTTP client's and the kernel's) may hold before a
    /// sender sees them leave.
    static let bufferAllowance = 262_144

    /// How a watched transfer is judged.
    struct Rules: Sendable {
        var timings: LinkTimings
        /// The fixed part of the bound: `request_timeout`.
        var allowance: Duration
        /// How long the answer may rightly take once the body is sent (a long-poll's wait).
        var quiet: Duration
        /// Bytes per second the link drains at: measured, or the slowest assumed.
        var drainRate: Double
    }

    private struct State {
        var handed = 0
        var received = 0
        var headSeen = false
        var lastMove: Duration
        var windowStart: Duration
        var movedAtWindowStart = 0
    }

    let bodyBytes: Int
    let start: Duration
    private let state: Mutex<State>

    init(bodyBytes: Int, start: Duration) {
        self.bodyBytes = bodyBytes
        self.start = start
        state = Mutex(State(lastMove: start, windowStart: start))
    }

    /// Body bytes handed to the connection.
    var handed: Int { state.withLock { $0.handed } }

    func handed(_ bytes: Int, at time: Duration) {
        state.withLock { state in
            state.handed += bytes
            state.lastMove = time
        }
    }

    func headArrived(at time: Duration) {
        state.withLock { state in
            state.headSeen = true
            state.lastMove = time
        }
    }

    func received(_ bytes: Int, at time: Duration) {
        state.withLock { state in
            state.received += bytes
            state.lastMove = time
        }
    }

    /// Why the transfer counts as stalled at `time`, or nil while it is progressing.
    func stall(at time: Duration, rules: Rules) -> String? {
        state.withLock { state -> String? in
            let waiting = state.handed >= bodyBytes && !state.headSeen
            let drain = Duration.seconds(Double(min(bodyBytes, Self.bufferAllowance)) / rules.drainRate)
            let idleLimit = rules.timings.idleTimeout + drain + (waiting ? rules.quiet : .zero)
            if time - state.lastMove > idleLimit {
                return "no byte moved for \(Self.text(time - state.lastMove)) (idle_timeout \(Self.text(rules.timings.idleTimeout)))"
            }
            let moved = state.handed + state.received
            if waiting {
                // Waiting for the answer is not slowness: the window starts again after it.
                state.windowStart = time
                state.movedAtWindowStart = moved
            } else if rules.timings.minRate > 0, time - state.windowStart >= rules.timings.minRateWindow {
                let span = (time - state.windowStart).seconds
                let rate = Double(moved - state.movedAtWindowStart) / span
                if rate < Double(rules.timings.minRate) {
                    return "moved \(Int(rate)) B/s over \(Self.text(time - state.windowStart)), under min_rate \(rules.timings.minRate) B/s"
                }
                state.windowStart = time
                state.movedAtWindowStart = moved
            }
            let boundRate = max(Double(rules.timings.minRate), rules.drainRate / 4, 1)
            let bound = rules.allowance + rules.quiet + drain
                + .seconds(Double(bodyBytes + state.received) / boundRate)
            if time - start > bound {
                return "took \(Self.text(time - start)), past its bound of \(Self.text(bound)) for \(bodyBytes + state.received) bytes"
            }
            return nil
        }
    }

    /// The transfer as a sample for the link model, once its answer is in.
    func sample(endedAt end: Duration, headAt head: Duration) -> TransferSample {
        let received = state.withLock { $0.received }
        return TransferSample(bytesUp: bodyBytes, bytesDown: received, headAfter: head - start, totalAfter: end - start)
    }

    private static func text(_ duration: Duration) -> String {
        "\((duration.seconds * 10).rounded() / 10)s"
    }
}
