import Testing

@testable import DallySyncEngine

/// The mean number of bodies going up at once, over one body's time on the link.
@Suite("UploadSharing")
struct UploadSharingTests {
    @Test func aBodyAloneSharesWithNone() {
        var sharing = UploadSharing()
        let token = sharing.begin(at: 5)
        #expect(sharing.end(token, at: 9) == 1)
    }

    @Test func overlapIsWeightedByTime() {
        var sharing = UploadSharing()
        let a = sharing.begin(at: 0)
        let b = sharing.begin(at: 0)
        #expect(sharing.end(a, at: 10) == 2)
        // b had the link to itself for its last 10 s of 20.
        #expect(sharing.end(b, at: 20) == 1.5)
        // A pipeline: c starts half-way through d.
        let d = sharing.begin(at: 100)
        let c = sharing.begin(at: 105)
        #expect(sharing.end(d, at: 110) == 1.5)
        #expect(sharing.end(c, at: 115) == 1.5)
    }

    @Test func timeNeverRunsBackAndAnInstantBodyCountsAlone() {
        var sharing = UploadSharing()
        let a = sharing.begin(at: 10)
        // A call stamped a little earlier than the last (concurrent tasks) changes no time.
        let b = sharing.begin(at: 9)
        #expect(sharing.end(b, at: 9.5) == 1)
        #expect(sharing.end(a, at: 20) == 1)
    }
}
