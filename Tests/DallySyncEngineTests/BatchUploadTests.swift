import Testing

@testable import DallySyncEngine

/// Which batch bodies go in resumable frames: those that take a second or more on the measured
/// link, and before anything is measured, large ones.
@Suite("BatchUpload")
struct BatchUploadTests {
    @Test func aBodyGoesInFramesWhenItTakesASecondOrMoreOnTheLink() {
        let model = LinkModel()
        // Nothing measured: only a body that a cut would make costly.
        #expect(!BatchUpload.pays(bytes: 10_000, on: model))
        #expect(BatchUpload.pays(bytes: 64 << 10, on: model))
        // 2,000 B/s measured: 1,000 bytes take half a second, 4,000 two.
        model.record(TransferSample(bytesUp: 20_000, bytesDown: 0, headAfter: .seconds(10), totalAfter: .seconds(10)))
        #expect(!BatchUpload.pays(bytes: 1_000, on: model))
        #expect(BatchUpload.pays(bytes: 4_000, on: model))
        // A fast link never frames: a megabyte at 100 MB/s is 10 ms.
        let fast = LinkModel()
        fast.record(TransferSample(bytesUp: 10_000_000, bytesDown: 0, headAfter: .milliseconds(100), totalAfter: .milliseconds(100)))
        #expect(!BatchUpload.pays(bytes: 1_000_000, on: fast))
    }

    @Test func theBodyIsNamedByTheHashOfItsBytesAsSent() {
        let upload = BatchUpload(payload: [1, 2, 3], coding: .zstd)
        #expect(upload.hash == BatchUpload(payload: [1, 2, 3], coding: .identity).hash)
        #expect(upload.hash != BatchUpload(payload: [1, 2, 4], coding: .zstd).hash)
    }
}
