import Testing

@testable import DallySyncEngine

/// The link model learns from transfers alone: round trip from small requests, throughput from
/// large ones, and sizes batches and frames to a target time on what it measured.
@Suite("LinkModel")
struct LinkModelTests {
    @Test func roundTripAndThroughputComeFromRealTransfers() {
        let model = LinkModel()
        #expect(model.estimate.roundTripMs == nil)
        #expect(model.estimate.bytesPerSecondUp == nil)
        // A small ask: 600 ms to the answer's head.
        model.record(TransferSample(bytesUp: 300, bytesDown: 200, headAfter: .milliseconds(600), totalAfter: .milliseconds(600)))
        #expect(model.estimate.roundTripMs == 600)
        // 20,000 bytes up, answered after 10.6 s: 10 s of sending at 2,000 B/s.
        model.record(TransferSample(bytesUp: 20_000, bytesDown: 100, headAfter: .milliseconds(10_600), totalAfter: .milliseconds(10_600)))
        #expect(model.estimate.bytesPerSecondUp == 2_000)
        // 40,000 bytes down over 5 s after the head.
        model.record(TransferSample(bytesUp: 100, bytesDown: 40_000, headAfter: .milliseconds(600), totalAfter: .milliseconds(5_600)))
        #expect(model.estimate.bytesPerSecondDown == 8_000)
        #expect(model.estimate.samples == 3)
        // A slower sample moves the estimate part of the way (weight 0.3).
        model.record(TransferSample(bytesUp: 10_000, bytesDown: 0, headAfter: .milliseconds(10_600), totalAfter: .milliseconds(10_600)))
        let up = model.estimate.bytesPerSecondUp ?? 0
        #expect(abs(up - (2_000 - 0.3 * 1_000)) < 1)
    }

    @Test func twoBodiesGoingUpAtOnceMeasureTheWholeLink() {
        let model = LinkModel()
        // Two 20,000-byte bodies start together on a 2,000 B/s link: each gets half of it and
        // is answered after 20 s; alone, either would have taken 10 s.
        let first = model.uploadBegan(at: .zero)
        let second = model.uploadBegan(at: .zero)
        #expect(model.uploadEnded(first, at: .seconds(20)) == 2)
        #expect(model.uploadEnded(second, at: .seconds(20)) == 2)
        model.record(TransferSample(bytesUp: 20_000, bytesDown: 0, headAfter: .seconds(20), totalAfter: .seconds(20), sharing: 2))
        #expect(model.estimate.bytesPerSecondUp == 2_000)
        // Alone again.
        let alone = model.uploadBegan(at: .seconds(30))
        #expect(model.uploadEnded(alone, at: .seconds(40)) == 1)
    }

    @Test func twoTransfersGoAtOnceWhereTheRoundTripWouldIdleTheLink() {
        let model = LinkModel()
        // Unmeasured: one at a time.
        #expect(model.transfersAtOnce(bodyBytes: 262_144) == 1)
        #expect(model.transfersAtOnce(rows: 5_000) == 1)
        // A long round trip measured (600 ms), the throughput not yet: two at once, whatever
        // the size, so that the first answer's round trip does not idle the link.
        model.record(TransferSample(bytesUp: 300, bytesDown: 200, headAfter: .milliseconds(600), totalAfter: .milliseconds(600)))
        #expect(model.transfersAtOnce(bodyBytes: 262_144) == 2)
        #expect(model.transfersAtOnce(bodyBytes: 3_000_000) == 2)
        #expect(model.transfersAtOnce(rows: 5_000) == 2)
        // A short one (a LAN): one at a time until measured.
        let lan = LinkModel()
        lan.record(TransferSample(bytesUp: 300, bytesDown: 200, headAfter: .milliseconds(2), totalAfter: .milliseconds(2)))
        #expect(lan.transfersAtOnce(bodyBytes: 262_144) == 1)
        // 128,000 B/s, 600 ms: a 256 KiB chunk is 2 s, under 20 round trips (12 s): two at once.
        model.record(TransferSample(bytesUp: 128_000, bytesDown: 100, headAfter: .milliseconds(1_600), totalAfter: .milliseconds(1_600)))
        #expect(model.transfersAtOnce(bodyBytes: 262_144) == 2)
        // A 3 MB body is 23 s of that link: the round trip is little beside it.
        #expect(model.transfersAtOnce(bodyBytes: 3_000_000) == 1)
        // Batches by their measured row size: 5,000 rows of 80 bytes are 3 s.
        #expect(model.transfersAtOnce(rows: 5_000) == 1)
        model.noteBatch(rows: 100, bytesOnWire: 8_000)
        #expect(model.transfersAtOnce(rows: 5_000) == 2)
        #expect(model.transfersAtOnce(rows: 100_000) == 1)
    }

    @Test func onAFastLinkTwoTransfersGoAtOnceWhateverTheRoundTrip() {
        // A LAN: 2 ms round trips, 1.5 MB/s with the cloud's work on each batch included.
        let lan = LinkModel()
        lan.record(TransferSample(bytesUp: 300, bytesDown: 200, headAfter: .milliseconds(2), totalAfter: .milliseconds(2)))
        lan.record(TransferSample(bytesUp: 150_000, bytesDown: 100, headAfter: .milliseconds(100), totalAfter: .milliseconds(100)))
        // 5,000 rows of 26 bytes are 87 ms, 43 round trips: the cloud would idle while the
        // gateway records the next batch, so two go.
        lan.noteBatch(rows: 5_000, bytesOnWire: 130_000)
        #expect(lan.transfersAtOnce(rows: 5_000) == 2)
        #expect(lan.transfersAtOnce(bodyBytes: 262_144) == 2)
        // A body of several seconds even there goes alone: a cut would lose more of it.
        #expect(lan.transfersAtOnce(bodyBytes: 3_000_000) == 1)
        // A drain's large batches measure the throughput and no round trip: enough.
        let draining = LinkModel()
        draining.record(TransferSample(bytesUp: 150_000, bytesDown: 100, headAfter: .milliseconds(100), totalAfter: .milliseconds(100)))
        draining.noteBatch(rows: 5_000, bytesOnWire: 130_000)
        #expect(draining.estimate.roundTripMs == nil)
        #expect(draining.transfersAtOnce(rows: 5_000) == 2)
        #expect(draining.transfersAtOnce(bodyBytes: 3_000_000) == 1)
    }

    @Test func aBatchCrossesQuicklyUnderASecondOfTheMeasuredLink() {
        let lan = LinkModel()
        // Nothing measured: not quick, whatever the size.
        #expect(!lan.crossesQuickly(rows: 1))
        lan.record(TransferSample(bytesUp: 150_000, bytesDown: 100, headAfter: .milliseconds(100), totalAfter: .milliseconds(100)))
        // The throughput alone (1.5 MB/s) is not enough: the row size is not known yet.
        #expect(!lan.crossesQuickly(rows: 1))
        lan.noteBatch(rows: 5_000, bytesOnWire: 130_000)
        // 5,000 rows of 26 bytes are 87 ms; 100,000 rows 1.7 s.
        #expect(lan.crossesQuickly(rows: 5_000))
        #expect(!lan.crossesQuickly(rows: 100_000))
        // 2,000 B/s: a batch of 100 rows of 200 bytes is 10 s.
        let satellite = LinkModel()
        satellite.record(TransferSample(bytesUp: 60_000, bytesDown: 100, headAfter: .seconds(30), totalAfter: .seconds(30)))
        satellite.noteBatch(rows: 100, bytesOnWire: 20_000)
        #expect(!satellite.crossesQuickly(rows: 100))
        #expect(satellite.crossesQuickly(rows: 5))
    }

    @Test func aBatchBesideAnotherBeginsARoundTripLaterOnALongLink() {
        // Nothing measured, or a short round trip: at once.
        #expect(LinkModel().spacing(afterBatchOf: 5_000) == .zero)
        let lan = LinkModel()
        lan.record(TransferSample(bytesUp: 300, bytesDown: 200, headAfter: .milliseconds(2), totalAfter: .milliseconds(2)))
        #expect(lan.spacing(afterBatchOf: 5_000) == .zero)
        let satellite = LinkModel()
        satellite.record(TransferSample(bytesUp: 300, bytesDown: 200, headAfter: .milliseconds(600), totalAfter: .milliseconds(600)))
        // The round trip alone while the throughput is not measured.
        #expect(satellite.spacing(afterBatchOf: 5_000) == .milliseconds(600))
        // 128,000 bytes answered 1.6 s after they began: 128,000 B/s; rows of 110 bytes.
        satellite.record(TransferSample(bytesUp: 128_000, bytesDown: 100, headAfter: .milliseconds(1_600), totalAfter: .milliseconds(1_600)))
        satellite.noteBatch(rows: 5_000, bytesOnWire: 550_000)
        // 5,000 rows are 4.3 s on the link: a round trip; 100 rows are across in 86 ms.
        #expect(satellite.spacing(afterBatchOf: 5_000) == .milliseconds(600))
        #expect(satellite.spacing(afterBatchOf: 100) == .milliseconds(86))
    }

    @Test func batchesAndFramesAreSizedToTheTargetTime() {
        let model = LinkModel()
        // Nothing measured: the configured limit, and the whole chunk as one frame.
        #expect(model.batchRows(limit: 5_000, target: .seconds(30)) == 5_000)
        #expect(model.frameBytes(whole: 1_000_000, target: .seconds(30)) == 1_000_000)
        #expect(model.frameBytes(whole: 1_000, target: .seconds(30)) == 1_000)
        model.record(TransferSample(bytesUp: 100, bytesDown: 100, headAfter: .zero, totalAfter: .zero))
        model.record(TransferSample(bytesUp: 60_000, bytesDown: 100, headAfter: .seconds(30), totalAfter: .seconds(30)))
        model.noteBatch(rows: 100, bytesOnWire: 20_000)
        // 2,000 B/s × 30 s = 60,000 bytes = 300 rows of 200 bytes.
        #expect(model.batchRows(limit: 5_000, target: .seconds(30)) == 300)
        #expect(model.batchRows(limit: 100, target: .seconds(30)) == 100)
        #expect(model.frameBytes(whole: 1_000_000, target: .seconds(30)) == 60_000)
        #expect(model.frameBytes(whole: 1_000_000, target: .seconds(1)) == 16_384)
    }

    @Test func aWakesFirstBatchIsSmallUntilTheThroughputIsMeasured() {
        // Nothing measured, a short round trip: an eighth of what a batch may carry, so that
        // its answer soon lets the next ones go two at a time.
        let lan = LinkModel()
        lan.record(TransferSample(bytesUp: 300, bytesDown: 200, headAfter: .milliseconds(2), totalAfter: .milliseconds(2)))
        #expect(lan.openingBatchRows(5_000) == 625)
        #expect(lan.openingBatchRows(4) == 1)
        // The row size known from small batches: just enough rows for twice a measuring body.
        lan.noteBatch(rows: 10, bytesOnWire: 400)
        #expect(lan.openingBatchRows(5_000) == 410)
        #expect(lan.openingBatchRows(100) == 100)
        // Measured: every batch at the size the link allows.
        lan.record(TransferSample(bytesUp: 150_000, bytesDown: 100, headAfter: .milliseconds(100), totalAfter: .milliseconds(100)))
        #expect(lan.openingBatchRows(5_000) == 5_000)
        // A long round trip sends two at once from the start: the first batch waits for no answer.
        let satellite = LinkModel()
        satellite.record(TransferSample(bytesUp: 300, bytesDown: 200, headAfter: .milliseconds(600), totalAfter: .milliseconds(600)))
        #expect(satellite.openingBatchRows(5_000) == 5_000)
    }

    @Test func failuresAndResumesAreCounted() {
        let model = LinkModel()
        model.wasted(1_000)
        model.wasted(500)
        model.resumed(70_000)
        model.staleConnection()
        #expect(model.estimate.counters.map(\.1) == [1_500, 70_000, 1])
        #expect(model.estimate.counters.map(\.0) == ["wasted_bytes", "resumed_bytes", "stale_connections"])
    }
}
