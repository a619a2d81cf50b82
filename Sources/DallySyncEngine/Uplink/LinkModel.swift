import Synchronization

/// One uplink's link as measured from its own traffic (no probe bytes of its own: on a metered
/// class every byte is paid for), and the request sizes that follow from it.
///
/// - Round trip: the time to the answer's head of requests whose bodies are small.
/// - Throughput up: a large body's bytes over its time to the answer's head, less one round
///   trip (the cloud answers once the last byte arrived), times the bodies that shared the
///   link meanwhile (``UploadSharing``). Down: a large answer's bytes over
///   the time its body took.
///
/// Each is an exponentially weighted mean (weight ``weight`` for the newest sample), so a link
/// that changes (a satellite beam handover, a congested cell) is followed within a few requests.
final class LinkModel: Sendable {
    /// The newest sample's weight in the smoothed figures.
    static let weight = 0.3
    /// A body at most this large times a round trip.
    static let smallBody = 2_048
    /// A body at least this large measures throughput: smaller ones are mostly round trip.
    static let measuringBody = 8_192
    /// What an unmeasured link is assumed to carry for the watch's allowances: 2 kbit/s, the
    /// slowest link Dally is meant for, so that a first transfer is never cut for being slow.
    static let assumedBytesPerSecond = 250.0

    private let state = Mutex(State())

    private struct State {
        var estimate = LinkEstimate()
        /// Compressed batch bytes per row, smoothed.
        var rowBytes: Double?
        var sharing = UploadSharing()
    }

    var estimate: LinkEstimate { state.withLock { $0.estimate } }

    /// Learns from a transfer that completed.
    func record(_ sample: TransferSample) {
        state.withLock { state in
            var estimate = state.estimate
            let head = sample.headAfter.seconds
            if sample.bytesUp <= Self.smallBody, sample.bytesDown <= Self.measuringBody {
                estimate.roundTripMs = Self.smooth(estimate.roundTripMs, head * 1000)
            }
            // At most half the time to the head is taken for the round trip: a round trip
            // measured while the cloud was slow must not make a body look instantaneous.
            let roundTrip = min((estimate.roundTripMs ?? 0) / 1000, head / 2)
            if sample.bytesUp >= Self.measuringBody, head > 0 {
                estimate.bytesPerSecondUp = Self.smooth(
                    estimate.bytesPerSecondUp, Double(sample.bytesUp) * sample.sharing / (head - roundTrip))
            }
            let body = sample.totalAfter.seconds - head
            if sample.bytesDown >= Self.measuringBody, body > 0 {
                estimate.bytesPerSecondDown = Self.smooth(estimate.bytesPerSecondDown, Double(sample.bytesDown) / body)
            }
            estimate.samples += 1
            state.estimate = estimate
        }
    }

    /// A body large enough to measure the link starts going up at `time`.
    func uploadBegan(at time: Duration) -> UploadSharing.Token {
        state.withLock { $0.sharing.begin(at: time.seconds) }
    }

    /// The body begun as `token` is up at `time`: how many bodies shared the link meanwhile.
    func uploadEnded(_ token: UploadSharing.Token, at time: Duration) -> Double {
        state.withLock { $0.sharing.end(token, at: time.seconds) }
    }

    /// Counts the body bytes a failed request had handed to the link.
    func wasted(_ bytes: Int) {
        state.withLock { $0.estimate.wastedBytes += Int64(bytes) }
    }

    /// Counts a request sent again because its connection had closed before it went.
    func staleConnection() {
        state.withLock { $0.estimate.staleConnections += 1 }
    }

    /// Counts bytes of a cut transfer that were kept, so that they were not sent again.
    func resumed(_ bytes: Int) {
        state.withLock { $0.estimate.resumedBytes += Int64(bytes) }
    }

    /// Learns the wire size of a batch's rows.
    func noteBatch(rows: Int, bytesOnWire: Int) {
        guard rows > 0 else { return }
        state.withLock { $0.rowBytes = Self.smooth($0.rowBytes, Double(bytesOnWire) / Double(rows)) }
    }

    /// Whether a transfer has measured the link's throughput up yet.
    var measuresThroughput: Bool { state.withLock { $0.estimate.bytesPerSecondUp != nil } }

    /// The rate the watch assumes the link drains at: measured, else ``assumedBytesPerSecond``.
    var drainRate: Double {
        let measured = state.withLock { $0.estimate.bytesPerSecondUp }
        return max(measured ?? Self.assumedBytesPerSecond, 1)
    }

    /// A transfer taking less than this many round trips of the link goes beside another
    /// (``transfersAtOnce(bodyBytes:)``): waiting a round trip for each answer would idle the
    /// link more than a twentieth of the time.
    static let pipelineRoundTrips = 20.0

    /// A round trip this long (ms) makes two transfers go at once before the throughput is
    /// measured: each round trip waited alone would idle a satellite or long-haul link for it.
    static let longRoundTripMs = 150.0

    /// Whether the measured round trip is ``longRoundTripMs`` or more: a request that waits
    /// for an answer before the next one's bytes can go then idles the link noticeably.
    var roundTripIsLong: Bool {
        Self.isLong(roundTripMs: state.withLock { $0.estimate.roundTripMs })
    }

    private static func isLong(roundTripMs: Double?) -> Bool { (roundTripMs ?? 0) >= longRoundTripMs }

    /// A transfer this short (seconds, on the measured link, the cloud's work on it included)
    /// goes beside another whatever the round trip: a cut then loses under a second of the
    /// link, and what bounds a backlog's drain on a fast link is the two ends' work, which
    /// overlaps only with a second batch on the wire (the cloud applies one while the gateway
    /// records the next). Two at once drained 100,000 rows on loopback 1.1–1.3× as fast
    /// (docs/BENCHMARKS.md, "A long outage's backlog").
    static let quickTransferSeconds = 1.0

    /// How many transfers of `bodyBytes` each to keep on the link at once: two where waiting
    /// for each answer would idle the link or the cloud noticeably (a long round trip, or a
    /// transfer under ``quickTransferSeconds``), else one — a cut loses what sits in each
    /// transfer's buffers, and on a slow link, where bytes cost most, a round trip is little
    /// beside a transfer. Before the throughput is measured, two when the round trip is long
    /// (``longRoundTripMs``: the first transfer's answer would leave the link idle for it),
    /// else one; one before anything is measured.
    func transfersAtOnce(bodyBytes: Int) -> Int {
        let (rate, roundTripMs) = state.withLock { ($0.estimate.bytesPerSecondUp, $0.estimate.roundTripMs) }
        guard let rate, rate > 0 else { return Self.isLong(roundTripMs: roundTripMs) ? 2 : 1 }
        // A drain of large batches measures the throughput but no round trip (only small
        // requests do): a quick transfer needs none.
        let seconds = Double(bodyBytes) / rate
        if seconds < Self.quickTransferSeconds { return 2 }
        guard let roundTripMs else { return 1 }
        return seconds < Self.pipelineRoundTrips * roundTripMs / 1000 ? 2 : 1
    }

    /// Whether a batch of `rows` rows crosses the measured link in under
    /// ``quickTransferSeconds``; false while the throughput or the row size is not measured.
    ///
    /// There the two ends' work bounds a drain, not the link: a batch built while two are on
    /// the wire goes the moment an answer makes room, instead of the cloud waiting for its
    /// build (a 100,000-row drain on loopback ~1.04x as fast, docs/BENCHMARKS.md, "Built while
    /// two fly"). On a slower link a batch is built only when it can go, so that its rows are
    /// not held in flight, nor its size fixed, while an earlier one still crosses.
    func crossesQuickly(rows: Int) -> Bool {
        let (rowBytes, rate) = state.withLock { ($0.rowBytes, $0.estimate.bytesPerSecondUp) }
        guard let seconds = Self.secondsOnLink(rows: rows, rowBytes: rowBytes, rate: rate) else { return false }
        return seconds < Self.quickTransferSeconds
    }

    /// A batch of `rows` rows' seconds on a link of `rate` bytes per second up; nil while
    /// either the row size or the rate is not measured.
    private static func secondsOnLink(rows: Int, rowBytes: Double?, rate: Double?) -> Double? {
        guard let rowBytes, let rate, rate > 0 else { return nil }
        return rowBytes * Double(rows) / rate
    }

    /// How long after a batch of `rows` rows begins the next one on the wire beside it should
    /// begin: zero unless the round trip is long (``roundTripIsLong``), else a round trip, or
    /// the batch's time on the measured link when that is shorter.
    ///
    /// Two bodies that start together share the link and end together; both answers are then
    /// a round trip away and the link idles for it before the next two go. Begun a round trip
    /// later, the second still has a round trip of bytes to send when the first is across, so
    /// the first's answer (and the batch after it) comes as the link frees: on a 128,000 B/s
    /// link with a 600 ms round trip, ~0.6 s a pair (docs/BENCHMARKS.md, "Batches a round
    /// trip apart"). The total bytes, and so the last answer, are not delayed: the link is
    /// busy either way until both are across.
    ///
    /// ```swift
    /// // measured: 600 ms round trip, 128,000 B/s up, 110 compressed bytes a row
    /// model.spacing(afterBatchOf: 5_000)   // 0.6 s: the batch is 4.3 s on the link
    /// model.spacing(afterBatchOf: 100)     // 0.086 s: across before a round trip
    /// ```
    func spacing(afterBatchOf rows: Int) -> Duration {
        let (roundTripMs, rowBytes, rate) = state.withLock {
            ($0.estimate.roundTripMs, $0.rowBytes, $0.estimate.bytesPerSecondUp)
        }
        guard let roundTripMs, Self.isLong(roundTripMs: roundTripMs) else { return .zero }
        let onLink = Self.secondsOnLink(rows: rows, rowBytes: rowBytes, rate: rate)
        let seconds = min(roundTripMs / 1000, onLink ?? .infinity)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// ``transfersAtOnce(bodyBytes:)`` for batches of `rows` rows at the measured row size.
    /// Before any batch was measured, its size does not matter while the throughput is not
    /// known either (the round trip alone decides); once the throughput is, one at a time.
    func transfersAtOnce(rows: Int) -> Int {
        let (rowBytes, rate) = state.withLock { ($0.rowBytes, $0.estimate.bytesPerSecondUp) }
        guard let rowBytes else { return rate == nil ? transfersAtOnce(bodyBytes: 0) : 1 }
        return transfersAtOnce(bodyBytes: Int(rowBytes * Double(rows)))
    }

    /// The most rows a batch should carry so that it takes about `target` on the measured link;
    /// `limit` (`max_batch_rows`) until both the throughput and the row size are known.
    func batchRows(limit: Int, target: Duration) -> Int {
        let (rate, rowBytes) = state.withLock { ($0.estimate.bytesPerSecondUp, $0.rowBytes) }
        guard let rate, let rowBytes, rowBytes > 0 else { return limit }
        return min(limit, max(1, Int(rate * target.seconds / rowBytes)))
    }

    /// The rows of a wake's first batch, `rows` being what a batch may carry: while the
    /// throughput is unmeasured and one transfer goes at a time, just enough to measure it
    /// (twice ``measuringBody`` at the row size known from smaller batches, else an eighth of
    /// `rows`), so that its answer comes soon and lets the next batches go two at a time; a
    /// full first batch kept the cloud waiting for the second one's build and for its own
    /// apply (on loopback the second and third batches of a 100,000-row drain left ~65 ms
    /// later; docs/BENCHMARKS.md). `rows` once measured, or where two go at once anyway (a
    /// long round trip).
    func openingBatchRows(_ rows: Int) -> Int {
        let (rate, rowBytes) = state.withLock { ($0.estimate.bytesPerSecondUp, $0.rowBytes) }
        guard rate == nil, transfersAtOnce(rows: rows) == 1 else { return rows }
        guard let rowBytes, rowBytes > 0 else { return max(1, rows / 8) }
        return min(rows, max(1, Int((2 * Double(Self.measuringBody) / rowBytes).rounded(.up))))
    }

    /// The bytes of one frame of a chunk upload: what the measured link carries in `target`,
    /// at least `minimum`; the whole chunk (`whole`) when it fits, or when nothing is measured
    /// yet (a cut loses nothing the cloud received either way, and a fast link keeps one
    /// request per chunk).
    func frameBytes(whole: Int, target: Duration, minimum: Int = 16_384) -> Int {
        let rate = state.withLock { $0.estimate.bytesPerSecondUp }
        guard let rate else { return whole }
        return min(whole, max(minimum, Int(rate * target.seconds)))
    }

    private static func smooth(_ old: Double?, _ sample: Double) -> Double {
        guard let old else { return sample }
        return old + weight * (sample - old)
    }
}
