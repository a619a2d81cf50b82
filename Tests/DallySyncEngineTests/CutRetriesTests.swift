import Testing

@testable import DallySyncEngine

/// A cut is retried at once when the link held since the last retry at once as long as the
/// backoff would have waited; otherwise the backoff paces it.
@Suite("CutRetries")
struct CutRetriesTests {
    let backoff = Backoff(minimum: .milliseconds(500), maximum: .seconds(4))

    /// Which of cuts at `times` (ms) go at once, in one run of cuts with no wake completed.
    private func atOnce(_ times: [Int64], into cuts: inout CutRetries) -> [Bool] {
        times.map { cuts.retryAtOnce(now: $0, backoff: backoff) }
    }

    @Test func aLinkThatHeldAsLongAsTheBackoffWouldWaitIsRetriedAtOnceAgain() {
        var cuts = CutRetries()
        // Held 500 ms (retry_min after one), then 1 s (twice that), then 2 s.
        #expect(atOnce([10_000, 10_500, 11_500, 13_500], into: &cuts) == [true, true, true, true])
        #expect(cuts.streak == 4)
    }

    @Test func aLinkThatCutsSoonAfterEachRetryIsLeftToTheBackoff() {
        var cuts = CutRetries()
        // A cut left to the backoff is not counted: the next is measured from the last retry
        // at once (10,600), and after two it must have held 1 s.
        #expect(atOnce([10_000, 10_499, 10_600, 11_599], into: &cuts) == [true, false, true, false])
        #expect(cuts.streak == 2)
    }

    @Test func theWaitAskedOfTheLinkStopsGrowingAtRetryMax() {
        var cuts = CutRetries()
        let everyRetryMax = (0...10).map { Int64($0) * 4_000 }
        #expect(atOnce(everyRetryMax, into: &cuts) == Array(repeating: true, count: 11))
        #expect(atOnce([everyRetryMax.last! + 3_999], into: &cuts) == [false])
    }

    @Test func aCompletedWakeLetsTheNextCutGoAtOnce() {
        var cuts = CutRetries()
        #expect(atOnce([10_000], into: &cuts) == [true])
        cuts.reset()
        #expect(atOnce([10_001], into: &cuts) == [true])
        #expect(cuts.streak == 1)
    }

    @Test func aBodyLargeEnoughToMeasureTheLinkAnsweredLetsTheNextCutGoAtOnce() {
        var cuts = CutRetries()
        #expect(atOnce([10_000, 10_500], into: &cuts) == [true, true])
        cuts.noteAnswer(bodyBytes: LinkModel.measuringBody - 1)  // an ask: mostly round trip
        #expect(atOnce([10_600], into: &cuts) == [false])
        cuts.noteAnswer(bodyBytes: LinkModel.measuringBody)  // a chunk frame or a batch
        #expect(atOnce([10_700], into: &cuts) == [true])
        #expect(cuts.streak == 1)
    }

    @Test func theBackoffsCeilingDoublesFromRetryMinUpToRetryMax() {
        #expect(backoff.ceiling(afterFailures: 1) == .milliseconds(500))
        #expect(backoff.ceiling(afterFailures: 2) == .seconds(1))
        #expect(backoff.ceiling(afterFailures: 4) == .seconds(4))
        #expect(backoff.ceiling(afterFailures: 40) == .seconds(4))
    }
}
