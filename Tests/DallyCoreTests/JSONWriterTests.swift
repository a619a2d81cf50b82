import DallyCore
import Testing

private func written(_ build: (inout JSONWriter) -> Void) -> String {
    var writer = JSONWriter()
    build(&writer)
    return String(decoding: writer.bytes, as: UTF8.self)
}

@Suite("JSONWriter")
struct JSONWriterTests {
    @Test func plainStringIsQuoted() {
        #expect(written { $0.string("hello") } == #""hello""#)
        #expect(written { $0.string("") } == #""""#)
    }

    @Test func quotesAndBackslashesAreEscaped() {
        #expect(written { $0.string(#"say "hi""#) } == #""say \"hi\"""#)
        #expect(written { $0.string(#"C:\dir\"#) } == #""C:\\dir\\""#)
        #expect(written { $0.string(#"\""#) } == #""\\\"""#)
    }

    @Test func slashIsNotEscaped() {
        #expect(written { $0.string("a/b") } == #""a/b""#)
    }

    @Test func commonControlCharactersUseShortEscapes() {
        #expect(written { $0.string("a\nb\rc\td") } == #""a\nb\rc\td""#)
    }

    @Test func otherControlCharactersUseUnicodeEscapes() {
        #expect(written { $0.string("\u{0}") } == #""\u0000""#)
        #expect(written { $0.string("\u{1}") } == #""\u0001""#)
        #expect(written { $0.string("\u{8}") } == #""\u0008""#)
        #expect(written { $0.string("\u{C}") } == #""\u000c""#)
        #expect(written { $0.string("\u{1B}[0m") } == #""\u001b[0m""#)
        #expect(written { $0.string("\u{1F}") } == #""\u001f""#)
    }

    @Test func everyControlCharacterIsEscaped() throws {
        let all = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let text = written { $0.string(all) }
        #expect(!text.utf8.contains { $0 < 0x20 })
        #expect(try JSONParser.parse(text) == .string(all))
    }

    /// Text between escapes is copied in runs: escapes first, last, next to each other and
    /// between multi-byte characters keep every byte around them in place.
    @Test func textAroundEscapesIsKeptWhole() throws {
        #expect(written { $0.string("\"start, middle\\and end\n") } == #""\"start, middle\\and end\n""#)
        #expect(written { $0.string("\n\n\"\"") } == #""\n\n\"\"""#)
        #expect(written { $0.string("é\tü\u{1}😀") } == "\"é\\tü\\u0001😀\"")
        let mixed = String(repeating: "row 42 \"quoted\" \\ é\n", count: 100)
        #expect(try JSONParser.parse(written { $0.string(mixed) }) == .string(mixed))
        let substring = "xx\"yy"[...].dropFirst()
        #expect(written { $0.string(String(substring)) } == #""x\"yy""#)
    }

    @Test func nonASCIIAndDeleteAreWrittenVerbatim() {
        #expect(written { $0.string("é€😀\u{7F}") } == "\"é€😀\u{7F}\"")
    }

    @Test func keyIsAnEscapedStringAndAColon() {
        #expect(written { $0.key(#"a"b"#) } == #""a\"b":"#)
    }

    @Test func integers() {
        #expect(written { $0.int(0) } == "0")
        #expect(written { $0.int(9) } == "9")
        #expect(written { $0.int(10) } == "10")
        #expect(written { $0.int(-1) } == "-1")
        #expect(written { $0.int(Int64.max) } == "9223372036854775807")
        #expect(written { $0.int(Int64.min) } == "-9223372036854775808")
        for value: Int64 in [11, 99, 100, 1_000_000, -10, -987_654_321, 1_795_670_000_000, Int64.max - 1, Int64.min + 1] {
            #expect(written { $0.int(value) } == String(value))
        }
    }

    @Test func finiteDoubles() throws {
        #expect(written { $0.double(1.5) } == "1.5")
        #expect(written { $0.double(-0.25) } == "-0.25")
        #expect(written { $0.double(100) } == "100.0")
        // Whatever the spelling, it parses back to the same value.
        for d in [0.1, 1e300, -2.5e-7, 1e16, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude] {
            #expect(try JSONParser.parse(written { $0.double(d) }) == .double(d))
        }
    }

    @Test(arguments: [Double.infinity, -Double.infinity, Double.nan, -Double.nan, Double.signalingNaN])
    func nonFiniteDoublesBecomeNull(_ d: Double) {
        #expect(written { $0.double(d) } == "null")
        #expect(JSONValue.array([.double(d), .int(1)]).jsonText == "[null,1]")
    }

    @Test func literals() {
        #expect(written { $0.bool(true) } == "true")
        #expect(written { $0.bool(false) } == "false")
        #expect(written { $0.null() } == "null")
        #expect(written { $0.raw("{}") } == "{}")
        #expect(written { $0.rawText(#"{"x":1}"#) } == #"{"x":1}"#)
    }

    @Test func composedValue() {
        let value: JSONValue = ["b": [1, "two", nil, true, 2.5], "a": [:], "c": []]
        #expect(value.jsonText == #"{"b":[1,"two",null,true,2.5],"a":{},"c":[]}"#)
    }

    @Test func writesAppendInOrder() {
        #expect(written { w in
            w.raw("[")
            w.int(1)
            w.raw(",")
            w.string("x")
            w.raw("]")
        } == #"[1,"x"]"#)
    }
}

@Suite("StoredRow.write")
struct StoredRowWriteTests {
    static let schema = TableSchema(
        name: "things",
        columns: [Column(name: "name", type: .text), Column(name: "n", type: .integer), Column(name: "raw", type: .blob)],
        conflict: .lastWriterWins,
        policy: SyncPolicy(
            localOnly: false, atomicSync: false,
            uploadRows: UploadPolicy(maxDelay: .seconds(1), networks: []),
            uploadObjects: UploadPolicy(maxDelay: .seconds(1), networks: []),
            downloadRows: DownloadPolicy(period: .seconds(1), networks: []),
            downloadObjects: DownloadPolicy(period: .seconds(1), networks: [])
        )
    )

    @Test func liveRow() {
        let row = StoredRow(
            id: "r1", seq: 7, updatedAt: 1_700_000_000_000, deleted: false, version: nil,
            values: [.text("a\"b"), .integer(-3), .blob([0, 255])]
        )
        let text = written { row.write(to: &$0, schema: Self.schema) }
        #expect(
            text == #"{"id":"r1","seq":7,"updated_at":1700000000000,"deleted":false,"version":null,"values":{"name":"a\"b","n":-3,"raw":"AP8="}}"#
        )
    }

    @Test func tombstoneHasNoValues() {
        let row = StoredRow(id: "r2", seq: 9, updatedAt: 5, deleted: true, version: 4, values: [.null, .null, .null])
        let text = written { row.write(to: &$0, schema: Self.schema) }
        #expect(text == #"{"id":"r2","seq":9,"updated_at":5,"deleted":true,"version":4,"values":{}}"#)
    }
}
