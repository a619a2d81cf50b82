import Testing

@testable import DallySyncEngine

/// A pull asked while a wake goes is served by a batch of the wake only when nothing was asked
/// after that batch read its cursors; else the wake's closing pull serves it.
@Suite("LatePulls")
struct LatePullsTests {
    @Test func aPullAskedSinceTheWakeBeganWaitsUntilABatchCarriesIt() {
        let requests = SyncRequests()
        requests.pull(["orders"])
        var late = LatePulls(askedBefore: requests.urgent.pulls, allowed: ["orders", "notes"])
        // Asked before the wake: its first batch serves it, nothing is late.
        #expect(late.waiting(in: requests).pulls.isEmpty)
        // Asked while it goes: late, until a batch built after it carries it.
        requests.pull(["notes"])
        let (pulls, served, readAt) = late.waiting(in: requests)
        #expect(pulls == ["notes"] && served.isEmpty)
        late.carried(["notes"], readAt: readAt)
        let after = late.waiting(in: requests)
        #expect(after.pulls.isEmpty && after.served == ["notes"])
    }

    @Test func aRequestAfterTheBatchReadItsCursorsStillWaits() {
        let requests = SyncRequests()
        var late = LatePulls(askedBefore: [], allowed: ["orders", "notes"])
        requests.pull(["notes"])
        let readAt = late.waiting(in: requests).readAt
        // The same table asked again after the carrying batch read its cursors: that batch
        // cannot serve it, whatever it carried.
        requests.pull(["notes"])
        late.carried(["notes"], readAt: readAt)
        let after = late.waiting(in: requests)
        #expect(after.pulls == ["notes"] && after.served.isEmpty)
        // A batch built since serves both.
        late.carried(["notes"], readAt: after.readAt)
        #expect(late.waiting(in: requests).pulls.isEmpty)
        // A carry recorded late for an older read changes nothing.
        late.carried(["orders"], readAt: readAt)
        #expect(late.waiting(in: requests).served == ["notes"])
    }

    @Test func onlyWhatTheUplinkMayPullIsLate() {
        let requests = SyncRequests()
        let late = LatePulls(askedBefore: [], allowed: ["orders"])
        requests.pull(["photos", "orders"])
        #expect(late.waiting(in: requests).pulls == ["orders"])
    }
}
