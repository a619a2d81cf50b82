import Testing

@testable import DallyCore

/// Documents are `Encodable`; these are the two pieces every document leans on.
@Suite("Typed JSON")
struct TypedJSONTests {
    struct Document: Encodable {
        let lastError: String?
        let counters: [(String, Int64)]

        func encode(to encoder: any Encoder) throws {
            var object = encoder.container(keyedBy: CodingName.self)
            try object.encode(counters: counters)
            try object.encode(lastError, for: "last_error")
            try object.encode(entries: [("b", 2), ("a", 1)], for: "nested")
        }
    }

    func text(_ value: some Encodable) throws -> String {
        String(decoding: try DocumentEncoder.encode(value), as: UTF8.self)
    }

    @Test func membersAreSortedAndNilIsNull() throws {
        let json = try text(Document(lastError: nil, counters: [("zeta", 1), ("alpha", 2)]))
        #expect(json == #"{"alpha":2,"last_error":null,"nested":{"a":1,"b":2},"zeta":1}"#)
    }

    @Test func aJSONValueEncodesAsItReadsBack() throws {
        let source = #"{"id":"a","n":3,"x":1.5,"ok":true,"none":null,"list":[1,"two",{"k":[]}]}"#
        let value = try JSONParser.parse(source)
        #expect(try text(value) == #"{"id":"a","list":[1,"two",{"k":[]}],"n":3,"none":null,"ok":true,"x":1.5}"#)
        #expect(try text(JSONValue.string("http://a/b")) == #""http://a/b""#)
    }

    @Test func nonFiniteNumbersBecomeNull() throws {
        #expect(try text(JSONValue.array([.double(.nan), .double(.infinity)])) == "[null,null]")
    }
}
