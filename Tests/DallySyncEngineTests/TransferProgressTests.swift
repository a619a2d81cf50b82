import DallyConfig
import Testing

@testable import DallySyncEngine

/// The watch's rules on a transfer's recorded progress, with times given by hand: idle beyond
/// the buffers' drain, the rate floor over a window, the bound that follows size and link, and
/// the quiet a long-poll may keep.
@Suite("TransferProgress")
struct TransferProgressTests {
    static func rules(
        idle: Duration = .seconds(10), minRate: Int = 100, window: Duration = .seconds(60),
        allowance: Duration = .seconds(30), quiet: Duration = .zero, drainRate: Double = 1_000
    ) -> TransferProgress.Rules {
        var timings = LinkTimings()
        timings.idleTimeout = idle
        timings.minRate = minRate
        timings.minRateWindow = window
        return TransferProgress.Rules(timings: timings, allowance: allowance, quiet: quiet, drainRate: drainRate)
    }

    @Test func aTransferThatKeepsMovingIsNeverCutHoweverLongItTakes() {
        // 1 MB at 1,000 B/s: 1,000 s, far past the old fixed 30 s.
        let progress = TransferProgress(bodyBytes: 1_000_000, start: .zero)
        let rules = Self.rules(drainRate: 1_000)
        for second in 1...1_000 {
            progress.handed(1_000, at: .seconds(second))
            #expect(progress.stall(at: .seconds(second) + .milliseconds(500), rules: rules) == nil)
        }
    }

    @Test func idleCountsFromTheLastByteAndAllowsTheBuffersToDrain() {
        // A 4,000-byte body handed at once: the buffers need 4 s at 1,000 B/s, then 10 s idle.
        let progress = TransferProgress(bodyBytes: 4_000, start: .zero)
        progress.handed(4_000, at: .zero)
        let rules = Self.rules(idle: .seconds(10), quiet: .zero, drainRate: 1_000)
        #expect(progress.stall(at: .seconds(13), rules: rules) == nil)
        let stall = progress.stall(at: .seconds(15), rules: rules)
        #expect(stall?.contains("no byte moved") == true, "\(stall ?? "nil")")
    }

    @Test func aLongPollMayStayQuietForItsWaitOnceItsBodyIsSent() {
        let progress = TransferProgress(bodyBytes: 0, start: .zero)
        let rules = Self.rules(idle: .seconds(10), quiet: .seconds(60))
        #expect(progress.stall(at: .seconds(65), rules: rules) == nil)
        #expect(progress.stall(at: .seconds(71), rules: rules) != nil)
        // Once the answer's head came, the quiet is over: the idle rule alone applies.
        let answered = TransferProgress(bodyBytes: 0, start: .zero)
        answered.headArrived(at: .seconds(1))
        #expect(answered.stall(at: .seconds(12), rules: rules) != nil)
    }

    @Test func aTrickleUnderTheFloorForAWholeWindowIsCut() {
        let progress = TransferProgress(bodyBytes: 1_000_000, start: .zero)
        let rules = Self.rules(idle: .seconds(10), minRate: 100, window: .seconds(60))
        // 50 B/s, a byte every few seconds: never idle, always under the floor.
        for second in stride(from: 5, through: 55, by: 5) {
            progress.handed(250, at: .seconds(second))
            #expect(progress.stall(at: .seconds(second), rules: rules) == nil)
        }
        progress.handed(250, at: .seconds(60))
        let stall = progress.stall(at: .seconds(60), rules: rules)
        #expect(stall?.contains("min_rate") == true, "\(stall ?? "nil")")
    }

    @Test func waitingForTheAnswerIsNotSlownessAndTheFloorCanBeTurnedOff() {
        let progress = TransferProgress(bodyBytes: 100, start: .zero)
        progress.handed(100, at: .zero)
        let rules = Self.rules(idle: .seconds(120), minRate: 100, window: .seconds(60), allowance: .seconds(120))
        #expect(progress.stall(at: .seconds(61), rules: rules) == nil)
        let trickle = TransferProgress(bodyBytes: 1_000_000, start: .zero)
        let off = Self.rules(idle: .seconds(10), minRate: 0, window: .seconds(60))
        for second in stride(from: 5, through: 120, by: 5) {
            trickle.handed(10, at: .seconds(second))
            #expect(trickle.stall(at: .seconds(second), rules: off) == nil)
        }
    }

    @Test func theBoundFollowsTheSizeAndTheMeasuredLink() {
        // 100,000 bytes, drain rate 1,000 B/s: bound = 30 s + 100 s drain allowance (capped at
        // the body) + 100,000 / 250 B/s (a quarter of the rate) = 530 s.
        let progress = TransferProgress(bodyBytes: 100_000, start: .zero)
        let rules = Self.rules(idle: .seconds(1_000), minRate: 0, allowance: .seconds(30), drainRate: 1_000)
        progress.handed(100_000, at: .seconds(1))
        progress.headArrived(at: .seconds(2))
        for second in stride(from: 10, through: 520, by: 10) {
            progress.received(1, at: .seconds(second))
            #expect(progress.stall(at: .seconds(second), rules: rules) == nil)
        }
        progress.received(1, at: .seconds(535))
        let stall = progress.stall(at: .seconds(535), rules: rules)
        #expect(stall?.contains("bound") == true, "\(stall ?? "nil")")
    }
}
