import Testing

@testable import DallyStore

/// An answer's ids are checked against the ids its batch sent without writing them as JSON
/// again; any doubt (a byte JSON may escape, any difference) answers false, and the caller
/// reads the array instead.
@Suite("JSON rows")
struct JSONRowsTests {
    @Test func anArrayHoldsExactlyTheStringsItWasWrittenFrom() throws {
        for ids in [[], ["a"], ["0192f1e0-aaaa", "0192f1e0-bbbb", "é, ü"], ["x"] + (1...500).map { "row-\($0)" }] {
            let json = JSONRows.strings(ids)
            #expect(JSONRows.holds(exactly: ids, json: json))
            #expect(try JSONRows.decodeStrings(json) == ids)
        }
    }

    @Test func anyDifferenceOrDoubtAnswersFalse() {
        let json = JSONRows.strings(["a", "b", "c"])
        #expect(!JSONRows.holds(exactly: ["a", "b"], json: json))
        #expect(!JSONRows.holds(exactly: ["a", "b", "c", "d"], json: json))
        #expect(!JSONRows.holds(exactly: ["a", "c", "b"], json: json))
        #expect(!JSONRows.holds(exactly: ["a", "b", "cc"], json: json))
        #expect(!JSONRows.holds(exactly: ["a", "b", ""], json: json))
        #expect(!JSONRows.holds(exactly: [], json: json))
        #expect(!JSONRows.holds(exactly: ["a"], json: "[]"))
        // Escaped in the array: read, not compared byte for byte.
        for id in ["quote\"d", "back\\slash", "line\nbreak"] {
            #expect(!JSONRows.holds(exactly: [id], json: JSONRows.strings([id])))
            #expect((try? JSONRows.decodeStrings(JSONRows.strings([id]))) == [id])
        }
        // A value that is, byte for byte, another's escaped form is not taken for it.
        #expect(!JSONRows.holds(exactly: ["a\\"], json: JSONRows.strings(["a\""])))
    }
}
