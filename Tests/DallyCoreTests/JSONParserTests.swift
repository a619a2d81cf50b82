import DallyCore
import Foundation
import Testing

/// Parses `text`, returning the error it throws, or nil when it parses.
private func parseError(_ text: String) -> JSONParseError? {
    do {
        _ = try JSONParser.parse(text)
        return nil
    } catch {
        return error
    }
}

@Suite("JSONParser: valid documents")
struct JSONParserValidTests {
    @Test func literals() throws {
        #expect(try JSONParser.parse("null") == .null)
        #expect(try JSONParser.parse("true") == .bool(true))
        #expect(try JSONParser.parse("false") == .bool(false))
        #expect(try JSONParser.parse("\"hi\"") == .string("hi"))
    }

    @Test func surroundingWhitespaceIsIgnored() throws {
        #expect(try JSONParser.parse(" \t\r\n [1] \n\t\r ") == .array([.int(1)]))
    }

    @Test func aLeadingByteOrderMarkIsSkipped() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(try JSONParser.parse(bom + Array(#"{"a": 1}"#.utf8)) == .object([JSONMember("a", .int(1))]))
        // Only one, and only first: offsets still count the mark's bytes.
        #expect(parseError("\u{FEFF}\u{FEFF}1")?.offset == 3)
        #expect(parseError(" \u{FEFF}1")?.offset == 1)
        #expect(parseError("\u{FEFF}")?.offset == 3)
    }

    @Test func nestedDocumentKeepsMemberOrder() throws {
        let value = try JSONParser.parse(#"{"z": [1, {"b": null, "a": true}], "a": {}, "m": [] }"#)
        let expected: JSONValue = .object([
            JSONMember("z", .array([.int(1), .object([JSONMember("b", .null), JSONMember("a", .bool(true))])])),
            JSONMember("a", .object([])),
            JSONMember("m", .array([])),
        ])
        #expect(value == expected)
        #expect(value["a"] == .object([]))
        #expect(value["missing"] == nil)
    }

    @Test func duplicateMembersAreKeptInOrder() throws {
        let value = try JSONParser.parse(#"{"a":1,"a":2}"#)
        #expect(value == .object([JSONMember("a", .int(1)), JSONMember("a", .int(2))]))
        // The subscript returns the first one.
        #expect(value["a"] == .int(1))
    }

    @Test func simpleEscapes() throws {
        let value = try JSONParser.parse(#""q\" b\\ s\/ \b\f\n\r\t end""#)
        #expect(value == .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t end"))
    }

    @Test func unicodeEscapes() throws {
        #expect(try JSONParser.parse(#""\u0041\u00e9\u00E9\u20AC""#) == .string("Aéé€"))
        #expect(try JSONParser.parse(#""\u0000""#) == .string("\u{0}"))
    }

    @Test func surrogatePairBecomesOneScalar() throws {
        let value = try JSONParser.parse(#""x\uD83D\uDE00y""#)
        #expect(value == .string("x😀y"))
        guard case .string(let s) = value else { Issue.record("not a string"); return }
        #expect(s.unicodeScalars.map(\.value) == [0x78, 0x1F600, 0x79])
    }

    @Test func rawUTF8IsKept() throws {
        #expect(try JSONParser.parse("\"héllo 🌍\"") == .string("héllo 🌍"))
        // Mixed: raw UTF-8 before an escape takes the slow path.
        #expect(try JSONParser.parse("\"é\\n🌍\"") == .string("é\n🌍"))
    }

    @Test func integers() throws {
        #expect(try JSONParser.parse("0") == .int(0))
        #expect(try JSONParser.parse("7") == .int(7))
        #expect(try JSONParser.parse("-42") == .int(-42))
        #expect(try JSONParser.parse("1234567890123") == .int(1_234_567_890_123))
    }

    @Test func int64Limits() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .int(Int64.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .int(Int64.min))
    }

    /// A number no Int64 or Double holds digit for digit is kept as it was written, so that a
    /// JSON column gives it back as sent; its value as a Double is the nearest one.
    @Test func integersBeyondInt64AreKeptAsWritten() throws {
        for text in ["9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
                     "123456789012345678901234567890"] {
            let read = try JSONParser.parse(text)
            #expect(read == .number(text))
            #expect(read.double == Double(text))
            #expect(read.typeName == "number")
        }
    }

    @Test func decimalsWithMoreDigitsThanADoubleKeepsAreKeptAsWritten() throws {
        for text in ["0.12345678901234567891", "123456789.123456789", "-1.00000000000000000001", "9007199254740993.5",
                     "1.2345678901234567891e300"] {
            #expect(try JSONParser.parse(text) == .number(text))
        }
        // Every digit a Double gives back: a Double, however it was spelt.
        #expect(try JSONParser.parse("1.10") == .double(1.1))
        #expect(try JSONParser.parse("0.1000000000000000000") == .double(0.1))
        #expect(try JSONParser.parse("12345678901234.5") == .double(12_345_678_901_234.5))
        #expect(try JSONParser.parse("100000000000000000000000") == .double(1e23))
        #expect(try JSONParser.parse("2.2250738585073e-308") == .double(2.2250738585073e-308))
        #expect(try JSONParser.parse("1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
        #expect(try JSONParser.parse("0.30000000000000004") == .double(0.1 + 0.2))
        #expect(try JSONParser.parse("3.141592653589793") == .double(.pi))
        #expect(try JSONParser.parse("5e-324") == .double(5e-324))
        // 16 or 17 digits the Double does not give back, and a subnormal's lost digits: as written.
        #expect(try JSONParser.parse("3.1415926535897931") == .number("3.1415926535897931"))
        #expect(try JSONParser.parse("4.9406564584124654e-324") == .number("4.9406564584124654e-324"))
        #expect(try JSONParser.parse("1.23456789e-320") == .number("1.23456789e-320"))
    }

    /// Read through Foundation's decoder (the client library, the command line), such numbers
    /// keep their digits too.
    @Test func aDecodedDocumentKeepsItsNumbersDigitForDigit() throws {
        let text = #"[18446744073709551615,0.12345678901234567891,0.1,2.5,7,-98765432109876543210]"#
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(decoded == [.number("18446744073709551615"), .number("0.12345678901234567891"), 0.1, 2.5, 7,
                            .number("-98765432109876543210")])
        #expect(decoded.jsonText == text)
    }

    @Test func aDocumentsNumbersComeBackAsWritten() throws {
        let text = #"{"id":18446744073709551615,"amounts":[0.12345678901234567891,-98765432109876543210,2.5],"n":1}"#
        #expect(try JSONParser.parse(text).jsonText == text)
    }

    @Test func fractionsAndExponents() throws {
        #expect(try JSONParser.parse("1.5") == .double(1.5))
        #expect(try JSONParser.parse("-0.25") == .double(-0.25))
        #expect(try JSONParser.parse("1e3") == .double(1000))
        #expect(try JSONParser.parse("1E3") == .double(1000))
        #expect(try JSONParser.parse("2.5e+2") == .double(250))
        #expect(try JSONParser.parse("25e-1") == .double(2.5))
        // A number with an exponent is a double even when its value is integral.
        #expect(try JSONParser.parse("1.0") == .double(1.0))
        // Underflow is finite, hence accepted: kept as written, its Double zero.
        #expect(try JSONParser.parse("1e-400") == .number("1e-400"))
        #expect(try JSONParser.parse("1e-400").double == 0)
    }

    /// Decimals read without a string for `Double(_:)` (an exact significand and power of ten)
    /// come out as `Double(_:)` reads them, bit for bit; so do those beside the shortcut.
    @Test func decimalsReadAsDoubleReadsThem() throws {
        var random = SplitMix64(seed: 11)
        for _ in 0..<20_000 {
            let integer = String(random.int64(in: 0...Int64(random.pick([9, 99_999, 9_007_199_254_740_993]))))
            let fraction = String(repeating: "0", count: random.int(in: 0...3)) + String(random.int64(in: 0...999_999))
            var text = (random.chance(50) ? "-" : "") + integer
            if random.chance(80) { text += "." + fraction }
            if random.chance(40) { text += random.pick(["e", "E"]) + random.pick(["", "+", "-"]) + String(random.int(in: 0...30)) }
            guard text.contains(where: { ".eE".contains($0) }) else { continue }
            let expected = try #require(Double(text))
            let parsed = try JSONParser.parse(text)
            // Foundation's Decimal (38 digits) says whether the Double's shortest text is the number sent.
            let posix = Locale(identifier: "en_US_POSIX")
            guard Decimal(string: text, locale: posix) == Decimal(string: expected.description, locale: posix) else {
                #expect(parsed == .number(text), "\(text)")
                #expect(parsed.double?.bitPattern == expected.bitPattern, "\(text)")
                continue
            }
            guard case .double(let read) = parsed else {
                Issue.record("\(text) did not read as a double")
                continue
            }
            #expect(read.bitPattern == expected.bitPattern, "\(text)")
        }
    }

    @Test func negativeZero() throws {
        // As a fraction, -0.0 keeps its sign.
        let fraction = try JSONParser.parse("-0.0")
        guard case .double(let d) = fraction else { Issue.record("expected a double, got \(fraction)"); return }
        #expect(d == 0 && d.sign == .minus)
        // As an integer, -0 is just 0.
        #expect(try JSONParser.parse("-0") == .int(0))
    }

    @Test func exactlyMaxDepthIsAccepted() throws {
        let depth = JSONParser.maxDepth
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        var expected: JSONValue = .array([])
        for _ in 1..<depth { expected = .array([expected]) }
        #expect(try JSONParser.parse(arrays) == expected)

        let objects = String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
        #expect(throws: Never.self) { try JSONParser.parse(objects) }
    }

    @Test func acceptsAnyByteCollection() throws {
        let bytes = Array(#"{"k":[1,2]}"#.utf8)
        let expected: JSONValue = ["k": [1, 2]]
        #expect(try JSONParser.parse(bytes) == expected)
        // A slice that does not start at 0.
        let padded = Array("xx".utf8) + bytes
        #expect(try JSONParser.parse(padded[2...]) == expected)
        // A collection without contiguous storage.
        #expect(try JSONParser.parse(bytes.lazy.map { $0 }) == expected)
    }
}

@Suite("JSONParser: rejections")
struct JSONParserRejectionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let input: String
        let offset: Int
        let reason: String
        var testDescription: String { "\(input.debugDescription) @\(offset)" }
    }

    static let cases: [Case] = [
        // Empty input.
        Case(input: "", offset: 0, reason: "unexpected end of input"),
        Case(input: "   ", offset: 3, reason: "unexpected end of input"),
        // Trailing data.
        Case(input: "1 2", offset: 2, reason: "unexpected data after"),
        Case(input: "{}x", offset: 2, reason: "unexpected data after"),
        Case(input: "[1]]", offset: 3, reason: "unexpected data after"),
        Case(input: "null null", offset: 5, reason: "unexpected data after"),
        // Leading zeros and other malformed numbers.
        Case(input: "01", offset: 0, reason: "leading zero"),
        Case(input: "-01", offset: 1, reason: "leading zero"),
        Case(input: "[00]", offset: 1, reason: "leading zero"),
        Case(input: "-", offset: 1, reason: "expected a digit"),
        Case(input: "-x", offset: 1, reason: "expected a digit"),
        Case(input: "1.", offset: 2, reason: "after '.'"),
        Case(input: "1.e5", offset: 2, reason: "after '.'"),
        Case(input: "1e", offset: 2, reason: "exponent"),
        Case(input: "1e+", offset: 3, reason: "exponent"),
        Case(input: "+1", offset: 0, reason: "expected a value"),
        Case(input: ".5", offset: 0, reason: "expected a value"),
        // Non-finite numbers; the offset is the start of the number.
        Case(input: "1e999", offset: 0, reason: "out of range"),
        Case(input: "-1e999", offset: 0, reason: "out of range"),
        Case(input: "[1, 1e400]", offset: 4, reason: "out of range"),
        Case(input: "NaN", offset: 0, reason: "expected a value"),
        Case(input: "Infinity", offset: 0, reason: "expected a value"),
        // Control characters in strings, on the fast and the slow path.
        Case(input: "\"a\u{01}b\"", offset: 2, reason: "control character"),
        Case(input: "\"a\nb\"", offset: 2, reason: "control character"),
        Case(input: "\"\\n\u{1F}\"", offset: 3, reason: "control character"),
        // Unterminated strings.
        Case(input: "\"abc", offset: 4, reason: "unterminated string"),
        Case(input: "\"a\\\"", offset: 4, reason: "unterminated string"),
        Case(input: "\"a\\", offset: 3, reason: "unexpected end of input in escape"),
        Case(input: "{\"k", offset: 3, reason: "unterminated string"),
        // Bad escapes.
        Case(input: #""\x""#, offset: 3, reason: "invalid escape"),
        Case(input: #""\U0041""#, offset: 3, reason: "invalid escape"),
        Case(input: #""\u12""#, offset: 3, reason: "truncated"),
        Case(input: #""\u12G4""#, offset: 5, reason: "invalid hex digit"),
        // Unpaired surrogates.
        Case(input: #""\uD800""#, offset: 7, reason: "unpaired surrogate"),
        Case(input: #""\uDC00""#, offset: 7, reason: "unpaired surrogate"),
        Case(input: #""\uD800x""#, offset: 7, reason: "unpaired surrogate"),
        Case(input: #""\uD800\n""#, offset: 7, reason: "unpaired surrogate"),
        Case(input: #""\uD800\u0041""#, offset: 13, reason: "unpaired surrogate"),
        Case(input: #""\uD800\uD800""#, offset: 13, reason: "unpaired surrogate"),
        // Literals.
        Case(input: "tru", offset: 0, reason: "unexpected end of input in literal"),
        Case(input: "trux", offset: 0, reason: "invalid literal"),
        Case(input: "nul", offset: 0, reason: "unexpected end of input in literal"),
        Case(input: "True", offset: 0, reason: "expected a value"),
        // Objects and arrays.
        Case(input: "{", offset: 1, reason: "expected a member name"),
        Case(input: "{1:2}", offset: 1, reason: "expected a member name"),
        Case(input: #"{"a" 1}"#, offset: 5, reason: "expected ':'"),
        Case(input: #"{"a":1,}"#, offset: 7, reason: "expected a member name"),
        Case(input: #"{"a":1 "b":2}"#, offset: 7, reason: "expected ',' or '}'"),
        Case(input: #"{"a":1"#, offset: 6, reason: "unexpected end of input in object"),
        Case(input: "[1,]", offset: 3, reason: "expected a value"),
        Case(input: "[1 2]", offset: 3, reason: "expected ',' or ']'"),
        Case(input: "[1", offset: 2, reason: "unexpected end of input in array"),
        Case(input: "[", offset: 1, reason: "unexpected end of input"),
        // Form feed is not JSON white space.
        Case(input: "\u{0C}1", offset: 0, reason: "expected a value"),
    ]

    @Test(arguments: cases)
    func rejected(_ c: Case) throws {
        let error = try #require(parseError(c.input), "expected \(c.input.debugDescription) to be rejected")
        #expect(error.offset == c.offset, "\(error)")
        #expect(error.reason.contains(c.reason), "\(error)")
        #expect(error.description == "invalid JSON at byte \(c.offset): \(error.reason)")
    }

    @Test func nestingDeeperThanMaxDepthIsRefused() throws {
        let depth = JSONParser.maxDepth + 1
        let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let error = try #require(parseError(arrays))
        #expect(error.offset == JSONParser.maxDepth)
        #expect(error.reason == "nesting deeper than \(JSONParser.maxDepth)")

        let objects = String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
        let objectError = try #require(parseError(objects))
        #expect(objectError.offset == 5 * JSONParser.maxDepth)
        #expect(objectError.reason.contains("nesting deeper"))
    }

    /// RFC 8259 §8.1 requires UTF-8: invalid sequences are refused, not replaced with U+FFFD.
    @Test(arguments: [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]] as [[UInt8]])
    func invalidUTF8InStringsIsRefused(_ bytes: [UInt8]) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
    }

    @Test func hostileNestingFailsWithoutRecursingDeeply() throws {
        let error = try #require(parseError(String(repeating: "[", count: 1_000_000)))
        #expect(error.offset == JSONParser.maxDepth)
        #expect(error.reason.contains("nesting deeper"))
    }
}

@Suite("JSONParser: round trip through JSONWriter")
struct JSONRoundTripTests {
    static let documents = [
        "null", "true", "0", "-1", "9223372036854775807", "-9223372036854775808", "1.5", "-2.5e-7", "1e300",
        "9223372036854775808", "\"\"", #""esc \" \\ \/ \b \f \n \r \t \u0001 \u001f \u00e9 \uD83D\uDE00""#,
        "[]", "{}", #"[1,[2,[3,[]]],{"a":{"b":[null,false]}}]"#,
        #"{"id":"a:b","values":{"n":1,"x":0.1,"s":"ü","j":{"k":[1,2.25,"three"]}},"expected_seq":0}"#,
    ]

    @Test(arguments: documents)
    func roundTrip(_ text: String) throws {
        let first = try JSONParser.parse(text)
        var writer = JSONWriter()
        writer.value(first)
        let second = try JSONParser.parse(writer.bytes)
        #expect(first == second)
        // Writing is deterministic: the compact text is a fixed point.
        #expect(second.jsonText == first.jsonText)
    }

    @Test func compactTextOfADocument() throws {
        let value = try JSONParser.parse(" { \"a\" : [ 1 , 2.5 , \"x\" ] , \"b\" : null } ")
        #expect(value.jsonText == #"{"a":[1,2.5,"x"],"b":null}"#)
    }
}
