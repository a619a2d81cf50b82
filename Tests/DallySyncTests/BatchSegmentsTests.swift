import DallyCore
import DallySync
import Testing

@Suite("Batch segments: a body cut at its sections")
struct BatchSegmentsTests {
    static func batch(_ sections: [BatchRequest.Section]) -> BatchRequest {
        BatchRequest(
            batchID: "b-1", gateway: "gw", replica: "r-1", since: TableVersions([("a", 3), ("b", 0)]), sections: sections)
    }

    static let tricky = BatchRequest.Section(
        table: "a", columns: ["text"],
        changes: [
            // Strings that look like structure must not cut the body.
            .init(id: "x", baseVersion: nil, updatedAt: 1, deleted: false, values: [.string(#"},{"table":"b","#)]),
            .init(id: "y", baseVersion: 4, updatedAt: 2, deleted: false, values: [.string(#"\"]}[{"#)]),
        ])

    @Test func segmentsCoverTheBodyInOrderAndNameTheirTables() {
        let body = Self.batch([
            Self.tricky,
            .init(table: "b", columns: ["n"], changes: [.init(id: "z", baseVersion: nil, updatedAt: 3, deleted: true, values: [])]),
        ]).encode()
        let cut = BatchSegments.cut(body)
        #expect(cut.segments.map(\.table) == ["a", "b"])
        #expect(cut.segments.first?.range.lowerBound == 0)
        #expect(cut.segments.last?.range.upperBound == body.count)
        for (earlier, later) in zip(cut.segments, cut.segments.dropFirst()) {
            #expect(earlier.range.upperBound == later.range.lowerBound)
        }
        // The second segment starts with the comma between the sections.
        if let second = cut.segments.last {
            #expect(String(decoding: body[second.range], as: UTF8.self).hasPrefix(#",{"table":"b""#))
            #expect(String(decoding: body[second.range], as: UTF8.self).hasSuffix("]}"))
        }
    }

    @Test func aPullIsOneSegmentWithoutATable() {
        let body = Self.batch([]).encode()
        #expect(BatchSegments.cut(body).segments == [.init(table: nil, range: 0..<body.count)])
    }

    @Test func aBodyOfAnotherShapeIsOneSegment() {
        let body = Array(#"{"sections":[{"rows":[]}],"batch":"b"}"#.utf8)
        #expect(BatchSegments.cut(body).segments == [.init(table: nil, range: 0..<body.count)])
    }
}
