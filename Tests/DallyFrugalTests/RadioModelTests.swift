import DallyFrugal
import Testing

/// The LTE model against figures worked by hand: promotion 260 ms at 1.21 W, transfers at
/// 1.21 W (1000 bytes up take 1.6 ms at 5 Mbit/s), a 10 s tail at 1.1 W.
@Suite("RadioModel")
struct RadioModelTests {
    let model = RadioModel.lte

    func expectClose(_ actual: Double, _ expected: Double, _ comment: Comment? = nil) {
        #expect(abs(actual - expected) < 1e-9, comment)
    }

    @Test func oneSmallRequestPaysAPromotionAndAWholeTail() {
        let usage = model.usage(of: [RadioEvent(at: 0, bytesUp: 1_000, bytesDown: 0)])
        #expect(usage.wakeUps == 1)
        expectClose(usage.activeMillis, 261.6)
        expectClose(usage.tailMillis, 10_000)
        // (260 × 1.21 + 1.6 × 1.21 + 10 000 × 1.1) / 1000
        expectClose(usage.energyJoules, 11.316536)
    }

    @Test func twoRequestsFiveSecondsApartShareOneWake() {
        let usage = model.usage(of: [
            RadioEvent(at: 0, bytesUp: 1_000, bytesDown: 0),
            RadioEvent(at: 5_000, bytesUp: 1_000, bytesDown: 0),
        ])
        #expect(usage.wakeUps == 1)
        expectClose(usage.activeMillis, 263.2)
        // 5000 − 261.6 of tail cut short, then a whole tail.
        expectClose(usage.tailMillis, 14_738.4)
        expectClose(usage.energyJoules, 16.530712)
    }

    @Test func twoRequestsElevenSecondsApartWakeTwice() {
        let usage = model.usage(of: [
            RadioEvent(at: 11_000, bytesUp: 1_000, bytesDown: 0),
            RadioEvent(at: 0, bytesUp: 1_000, bytesDown: 0),
        ])
        #expect(usage.wakeUps == 2)
        expectClose(usage.activeMillis, 523.2)
        expectClose(usage.tailMillis, 20_000)
        expectClose(usage.energyJoules, 2 * 11.316536)
    }

    @Test func aWakeNeedsMoreThanTheTailSinceTheLastTransferEnded() {
        // An empty exchange ends with its promotion, at 260 ms.
        let within = model.usage(of: [RadioEvent(at: 0, bytesUp: 0, bytesDown: 0), RadioEvent(at: 10_260, bytesUp: 0, bytesDown: 0)])
        let after = model.usage(of: [RadioEvent(at: 0, bytesUp: 0, bytesDown: 0), RadioEvent(at: 10_261, bytesUp: 0, bytesDown: 0)])
        #expect(within.wakeUps == 1)
        #expect(after.wakeUps == 2)
        expectClose(within.tailMillis, 20_000)
        expectClose(after.tailMillis, 20_000)
    }

    @Test func downloadsMoveAtTheDownlinkRate() {
        // 2.5 MB at 20 Mbit/s is one second.
        let usage = model.usage(of: [RadioEvent(at: 0, bytesUp: 0, bytesDown: 2_500_000)])
        expectClose(usage.activeMillis, 1_260)
        expectClose(usage.energyJoules, (260 * 1.21 + 1_000 * 1.21 + 10_000 * 1.1) / 1000)
        expectClose(model.transferMillis(bytesUp: 625_000, bytesDown: 2_500_000), 2_000)
    }

    @Test func activityDuringATransferQueuesBehindIt() {
        // 625 000 bytes up take a second; the second transfer starts when the first ends.
        let usage = model.usage(of: [
            RadioEvent(at: 500, bytesUp: 625_000, bytesDown: 0),
            RadioEvent(at: 0, bytesUp: 625_000, bytesDown: 0),
        ])
        #expect(usage.wakeUps == 1)
        expectClose(usage.activeMillis, 2_260)
        expectClose(usage.tailMillis, 10_000)
        expectClose(usage.connectedMillis, 12_260)
    }

    @Test func noActivityCostsNothing() {
        #expect(model.usage(of: []) == RadioUsage())
    }

    @Test func eachRadioOfAFleetIsModelledOnItsOwn() {
        let events: [(radio: Int, event: RadioEvent)] = [
            (1, RadioEvent(at: 0, bytesUp: 1_000, bytesDown: 0)),
            (2, RadioEvent(at: 0, bytesUp: 1_000, bytesDown: 0)),
            (1, RadioEvent(at: 5_000, bytesUp: 1_000, bytesDown: 0)),
        ]
        let byRadio = model.usageByRadio(of: events)
        #expect(byRadio[1]?.wakeUps == 1)
        #expect(byRadio[2]?.wakeUps == 1)
        let total = model.totalUsage(of: events)
        #expect(total.wakeUps == 2)
        expectClose(total.energyJoules, 16.530712 + 11.316536)
        expectClose(total.tailMillis, 14_738.4 + 10_000)
    }
}
