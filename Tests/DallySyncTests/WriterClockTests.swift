import DallyCore
import Testing

@testable import DallySync

@Suite("Writers' clocks ahead of the cloud's")
struct WriterClockTests {
    static func change(_ id: String, at updatedAt: Int64) -> BatchRequest.Change {
        BatchRequest.Change(id: id, baseVersion: nil, updatedAt: updatedAt, deleted: false, values: [.string(id)])
    }

    @Test func aChangeStampedPastTheMarginIsTakenAsMadeOnArrival() {
        let arrival: Int64 = 1_000_000
        var batch = BatchRequest(
            batchID: "b", gateway: "g", replica: "r", since: TableVersions(),
            sections: [
                .init(table: "a", columns: ["x"], changes: [Self.change("past", at: 5), Self.change("margin", at: arrival + 60_000)]),
                .init(table: "b", columns: ["x"], changes: [Self.change("ahead", at: arrival + 60_001), Self.change("years", at: arrival + 9_000_000)]),
            ])
        let ahead = batch.limitWriterClocks(to: arrival + 60_000, arrival: arrival)
        #expect(ahead == BatchRequest.ClockedAhead(changes: 2, aheadMs: 9_000_000))
        #expect(batch.sections.flatMap(\.changes).map(\.updatedAt) == [5, arrival + 60_000, arrival, arrival])
        #expect(batch.limitWriterClocks(to: arrival + 60_000, arrival: arrival) == BatchRequest.ClockedAhead())
    }
}
