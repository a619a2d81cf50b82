/// How many request bodies were going up an uplink at once, integrated over time, so that a
/// body that shared the link with another is not taken for a slow link.
///
/// Chunks and batches go up two at a time on a long link (the next one's bytes flow while the
/// one before waits for its answer); each then sees about half the link. A body's measured
/// rate times the mean number of bodies going up while it went is the link's rate.
///
/// ```swift
/// var sharing = UploadSharing()
/// let a = sharing.begin(at: 0)
/// let b = sharing.begin(at: 0)
/// sharing.end(a, at: 10)   // 2.0: it had the link to itself none of the time
/// sharing.end(b, at: 20)   // 1.5: shared for 10 s of its 20
/// ```
struct UploadSharing: Sendable {
    /// One body's start, as ``begin(at:)`` gave it.
    struct Token: Sendable {
        fileprivate let start: Double
        fileprivate let integral: Double
    }

    private var active = 0
    /// Body-seconds: the integral of `active` over time, up to `changedAt`.
    private var integral = 0.0
    private var changedAt = 0.0

    /// A body starts going up at `time` (seconds on the engine's clock).
    mutating func begin(at time: Double) -> Token {
        advance(to: time)
        active += 1
        return Token(start: changedAt, integral: integral)
    }

    /// The body begun as `token` is up (its answer's head came, or it failed) at `time`; the
    /// mean number of bodies going up while it went, itself included (1 when it went alone).
    mutating func end(_ token: Token, at time: Double) -> Double {
        advance(to: time)
        active = max(0, active - 1)
        let span = changedAt - token.start
        guard span > 0 else { return 1 }
        return max(1, (integral - token.integral) / span)
    }

    private mutating func advance(to time: Double) {
        // Calls may come a little out of order from concurrent tasks: time never runs back.
        guard time > changedAt else { return }
        integral += Double(active) * (time - changedAt)
        changedAt = time
    }
}
