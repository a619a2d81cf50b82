import DallyCore
import Testing

@testable import DallySync

@Suite("Where a downstream page starts")
struct DownstreamStartTests {
    @Test func aCursorAtOrPastTheHorizonPagesOn() {
        #expect(DownstreamStart(since: 120, tableVersion: 900, horizon: 120, resyncing: false) == start(120, false))
        #expect(DownstreamStart(since: 0, tableVersion: 900, horizon: 120, resyncing: false) == start(0, false))
    }

    @Test func aCursorBehindTheHorizonResyncsUnlessAlreadyResyncing() {
        #expect(DownstreamStart(since: 40, tableVersion: 900, horizon: 120, resyncing: false) == start(0, true))
        #expect(DownstreamStart(since: 40, tableVersion: 900, horizon: 120, resyncing: true) == start(40, false))
    }

    @Test func aCursorAheadOfTheCloudOrGoneBackResyncs() {
        #expect(DownstreamStart(since: 950, tableVersion: 900, horizon: 0, resyncing: false) == start(0, true))
        #expect(DownstreamStart(since: 950, tableVersion: 900, horizon: 0, resyncing: true) == start(0, true))
        #expect(DownstreamStart(since: 50, tableVersion: 900, horizon: 0, resyncing: false, regressed: true) == start(0, true))
        #expect(DownstreamStart(since: 50, tableVersion: 900, horizon: 0, resyncing: true, regressed: true) == start(50, false))
    }

    @Test func resyncFlagsTravelOnTheWire() throws {
        var page = ChangePage(table: "orders", columns: ["a"], since: 0, version: 7, more: true, rows: [])
        page.resync = true
        #expect(try ChangePage.decode(JSONParser.parse(page.encode())).resync)
        page.resync = false
        #expect(!String(decoding: page.encode(), as: UTF8.self).contains("resync"))

        var request = BatchRequest(batchID: "b1", gateway: "gw", replica: "r1", since: TableVersions([("orders", 3)]), sections: [])
        request.resyncing = ["orders"]
        #expect(try BatchRequest.decode(JSONParser.parse(request.encode()), maxRows: 10).resyncing == ["orders"])
    }

    private func start(_ from: Int64, _ resync: Bool) -> DownstreamStart {
        DownstreamStart(since: from, tableVersion: resync ? -1 : .max, horizon: 0, resyncing: false)
    }
}
