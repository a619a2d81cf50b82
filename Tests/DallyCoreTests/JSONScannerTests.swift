import DallyCore
import Testing

@Suite("JSONScanner: a document read token by token")
struct JSONScannerTests {
    /// The documentation's example: an array of strings, empty or not.
    static func names(_ text: String) throws(JSONParseError) -> [String] {
        try JSONScanner.scan(Array(text.utf8)) { scanner throws(JSONParseError) in
            var names: [String] = []
            try scanner.expect(UInt8(ascii: "["))
            if !scanner.take(UInt8(ascii: "]")) {
                repeat { names.append(try scanner.string()) } while try scanner.next(closing: UInt8(ascii: "]"))
            }
            try scanner.end()
            return names
        }
    }

    @Test func readsWhatItExpects() throws {
        #expect(try Self.names(#" [ "a" , "b\u00e9" ] "#) == ["a", "bé"])
        #expect(try Self.names("[]") == [])
    }

    @Test func refusesWhatItDoesNotExpectWithTheOffset() {
        func refusal(_ text: String) -> String? {
            do {
                _ = try Self.names(text)
                return nil
            } catch {
                return "\(error.offset): \(error.reason)"
            }
        }
        #expect(refusal(#"["a" "b"]"#) == "5: expected ',' or ']'")
        #expect(refusal(#"["a"]x"#) == "5: unexpected data after the JSON document")
        #expect(refusal("[1]") == "1: expected a string")
    }

    @Test func takesALiteralStringOrNullOnlyWhenItIsThere() throws {
        try JSONScanner.scan(Array(#"["put", null, "p\u0075t"]"#.utf8)) { scanner throws(JSONParseError) in
            try scanner.expect(UInt8(ascii: "["))
            let delete = scanner.take(string: "delete")
            let put = scanner.take(string: "put")
            #expect(!delete && put)
            try scanner.expect(UInt8(ascii: ","))
            let putInsteadOfNull = scanner.take(string: "put")
            let null = scanner.takeNull()
            #expect(!putInsteadOfNull && null)
            try scanner.expect(UInt8(ascii: ","))
            // Escaped, it is the same string but not the same bytes: left for a careful read.
            let escaped = scanner.take(string: "put")
            #expect(!escaped)
            #expect(try scanner.string() == "put")
            try scanner.expect(UInt8(ascii: "]"))
            try scanner.end()
        }
    }
}
