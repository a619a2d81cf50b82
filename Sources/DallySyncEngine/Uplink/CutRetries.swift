/// Which cuts an uplink retries at once, instead of after the backoff.
///
/// A connection that drops after the cloud answered in the same wake is a cut, not an
/// outage: the link carried traffic a moment ago, and a resumed transfer loses nothing it
/// sent, so waiting `retry_min` (half a second by default, as much as the cut itself cost on
/// a 128,000 B/s link) only idles the link. A link that flaps cuts again and again during one
/// long transfer; its retries at once must still not make the uplink hammer a link that cuts
/// every attempt. So after the first since the last completed wake, a retry at once goes only
/// if the link held, since the one before it, at least the longest wait the backoff would
/// have taken after as many failures (`retry_min` after one, twice that after two, … up to
/// `retry_max`): the time the link carried that retry counts as its wait. A link that cuts
/// every attempt soon after it begins is paced as the backoff would pace it. A request whose
/// body was large enough to measure the link, answered since, shows it carrying transfers
/// whole again: the next cut goes at once, as after a completed wake (a chunk at 2,000 B/s
/// takes minutes; a transfer of hours would otherwise wait out ever longer backoffs).
///
/// ```swift
/// var cuts = CutRetries()
/// let backoff = Backoff(minimum: .milliseconds(500), maximum: .seconds(60))
/// cuts.retryAtOnce(now: 1_000, backoff: backoff)   // true: the first cut
/// cuts.retryAtOnce(now: 1_300, backoff: backoff)   // false: held 300 ms, under 500
/// ```
struct CutRetries: Sendable {
    /// Retries let go at once since the last completed wake.
    private(set) var streak = 0
    /// When (ms since 1970) the last of them went.
    private var lastAt: Int64?

    /// Whether a cut at `now` goes at once; if so, it is counted.
    mutating func retryAtOnce(now: Int64, backoff: Backoff) -> Bool {
        if let lastAt, now - lastAt < backoff.ceiling(afterFailures: streak).milliseconds { return false }
        streak += 1
        lastAt = now
        return true
    }

    /// A wake completed: the link is past its cuts, and the next one goes at once again.
    mutating func reset() { self = CutRetries() }

    /// A request that carried `bodyBytes` up was answered: a body of at least
    /// ``LinkModel/measuringBody`` went whole, so the link is past its cuts too.
    mutating func noteAnswer(bodyBytes: Int) {
        if bodyBytes >= LinkModel.measuringBody { reset() }
    }
}
