import DallyCore
import Testing

/// Converts `json` for a column named `col` of `type`, returning the error it throws.
private func conversionError(_ json: JSONValue, _ type: ColumnType, column: String = "col") -> DallyError? {
    do {
        _ = try Value(json: json, for: Column(name: column, type: type))
        return nil
    } catch {
        return error
    }
}

private func value(_ json: JSONValue, _ type: ColumnType) throws -> Value {
    try Value(json: json, for: Column(name: "col", type: type))
}

@Suite("Value(json:for:)")
struct ValueConversionTests {
    @Test(arguments: ColumnType.allCases)
    func nullIsAcceptedForEveryType(_ type: ColumnType) throws {
        #expect(try value(.null, type) == .null)
    }

    @Test func text() throws {
        #expect(try value("hello", .text) == .text("hello"))
        #expect(try value("", .text) == .text(""))
    }

    @Test func integer() throws {
        #expect(try value(42, .integer) == .integer(42))
        #expect(try value(.int(Int64.min), .integer) == .integer(Int64.min))
        #expect(try value(.int(Int64.max), .integer) == .integer(Int64.max))
    }

    @Test func integralDoubleIsCoercedToInteger() throws {
        #expect(try value(3.0, .integer) == .integer(3))
        #expect(try value(-7.0, .integer) == .integer(-7))
        #expect(try value(1e15, .integer) == .integer(1_000_000_000_000_000))
        #expect(try value(-0.0, .integer) == .integer(0))
        // As parsed from the wire: "5e2" is a double.
        #expect(try value(JSONParser.parse("5e2"), .integer) == .integer(500))
    }

    @Test(arguments: [3.5, -0.1, 1e16, -1e16, 9.0e15, 1e300])
    func nonIntegralOrHugeDoubleIsNotAnInteger(_ d: Double) throws {
        let error = try #require(conversionError(.double(d), .integer))
        #expect(error.code == .wrongType)
        #expect(error.field == "col")
        #expect(error.message == "column 'col' expects INTEGER (an integer), got number")
    }

    /// Stored as given or refused: the replica's text ends at a U+0000, PostgreSQL refuses one.
    @Test func textWithUPlus0000IsRefusedNamingWhere() throws {
        #expect(try value(JSONParser.parse(#""tab\there é""#), .text) == .text("tab\there é"))
        let error = try #require(conversionError(JSONParser.parse(#""ab\u0000c""#), .text))
        #expect(error.code == .wrongType)
        #expect(error.field == "col")
        #expect(error.message.contains("without U+0000") && error.message.contains("UTF-8 byte 2"))
    }

    @Test func real() throws {
        #expect(try value(2.5, .real) == .real(2.5))
        #expect(try value(-1e-9, .real) == .real(-1e-9))
    }

    /// A number no Double holds digit for digit is, in a REAL column, the Double nearest it; an
    /// INTEGER column refuses an integer beyond 64 bits, as it refused it read as a Double.
    @Test func aNumberKeptAsWrittenIsItsNearestDoubleInARealColumn() throws {
        #expect(try value(.number("0.12345678901234567891"), .real) == .real(0.12345678901234568))
        #expect(try value(.number("18446744073709551615"), .real) == .real(18_446_744_073_709_551_615.0))
        let error = try #require(conversionError(.number("18446744073709551615"), .integer, column: "n"))
        #expect(error.code == .wrongType)
        #expect(error.message == "column 'n' expects INTEGER (an integer), got number")
    }

    @Test func integerIsCoercedToReal() throws {
        #expect(try value(3, .real) == .real(3.0))
        #expect(try value(-12, .real) == .real(-12.0))
    }

    @Test func boolean() throws {
        #expect(try value(true, .boolean) == .boolean(true))
        #expect(try value(false, .boolean) == .boolean(false))
    }

    @Test func blobFromBase64() throws {
        #expect(try value("aGVsbG8=", .blob) == .blob(Array("hello".utf8)))
        #expect(try value("AP8=", .blob) == .blob([0x00, 0xFF]))
        #expect(try value("", .blob) == .blob([]))
    }

    @Test(arguments: ["not base64!", "a", "aGVsbG8=!", "////=A==", "====", "aGVsbG8", "aGVs bG8=", "aGVsbG9="])
    func blobThatIsNotBase64IsRefused(_ text: String) throws {
        let error = try #require(conversionError(.string(text), .blob, column: "photo"))
        #expect(error.code == .wrongType)
        #expect(error.field == "photo")
        #expect(error.message == "column 'photo' expects BLOB (a base64 string), got a string that is not base64")
    }

    @Test func jsonColumnKeepsCompactText() throws {
        #expect(try value(["a": [1, 2.5, "x"], "b": nil], .json) == .json(#"{"a":[1,2.5,"x"],"b":null}"#))
        #expect(try value("s", .json) == .json(#""s""#))
        #expect(try value(7, .json) == .json("7"))
        #expect(try value(false, .json) == .json("false"))
        #expect(try value([], .json) == .json("[]"))
        // Numbers kept as written: the column gives them back as they were sent.
        #expect(try value([.number("18446744073709551615"), .number("1e-400")], .json) == .json("[18446744073709551615,1e-400]"))
    }

    /// A JSON value nests at most `maxJSONNesting` levels: deeper ones could not travel.
    @Test func aJSONValueNestedDeeperThanTheSyncMessagesCarryIsRefused() throws {
        func nested(_ levels: Int) throws -> JSONValue {
            try JSONParser.parse(String(repeating: #"{"a":["#, count: levels / 2) + (levels % 2 == 1 ? "[]" : "1")
                + String(repeating: "]}", count: levels / 2))
        }
        #expect(try nested(Value.maxJSONNesting).nesting == Value.maxJSONNesting)
        #expect(try value(try nested(Value.maxJSONNesting), .json) == .json(try nested(Value.maxJSONNesting).jsonText))
        let error = try #require(conversionError(try nested(Value.maxJSONNesting + 1), .json, column: "doc"))
        #expect(error.code == .wrongType)
        #expect(error.field == "doc")
        #expect(error.message.hasPrefix("column 'doc' expects JSON nested at most 32 levels deep, got 33"))
        #expect(try nested(0).nesting == 0)
        #expect(try JSONParser.parse("[[],{}]").nesting == 2)
    }

    /// Documents (a TinySync answer's rows, a conflict's row) write such a number's digits too.
    @Test func aDocumentWritesANumberKeptAsWrittenDigitForDigit() throws {
        let row: JSONValue = ["n": .number("18446744073709551615"), "a": .number("-0.12345678901234567891")]
        #expect(String(decoding: try DocumentEncoder.encode(row), as: UTF8.self) == #"{"a":-0.12345678901234567891,"n":18446744073709551615}"#)
    }

    @Test func objectColumnTakesARequestedHashAndKeepsOnlyTheHash() throws {
        let hex = String(repeating: "Ab", count: 32)
        let lower = String(repeating: "ab", count: 32)
        #expect(try value(["hash": .string(hex)], .object) == .json(#"{"hash":"\#(lower)"}"#))
        // Size and chunks may be given; the store fills in its own.
        #expect(
            try value(["hash": .string(lower), "size": 3, "chunks": 1], .object) == .json(#"{"hash":"\#(lower)"}"#))
    }

    @Test(arguments: [
        JSONValue.string("x"), .int(1), .object([]), .bool(true), ["hash": "abc"],
        ["hash": .string(String(repeating: "g", count: 64))], ["hash": 12], [["hash": "x"]],
    ])
    func objectColumnRefusesAnythingButAHash(_ json: JSONValue) throws {
        let error = try #require(conversionError(json, .object, column: "receipt"))
        #expect(error.code == .wrongType)
        #expect(error.field == "receipt")
        #expect(error.message.contains("'receipt'"))
        #expect(error.message.contains("POST /v1/objects"))
    }

    struct WrongType: Sendable {
        let json: JSONValue
        let type: ColumnType
        let message: String
    }

    static let wrongTypes: [WrongType] = [
        WrongType(json: 1, type: .text, message: "column 'col' expects TEXT (a string), got integer"),
        WrongType(json: true, type: .text, message: "column 'col' expects TEXT (a string), got boolean"),
        WrongType(json: [:], type: .text, message: "column 'col' expects TEXT (a string), got object"),
        WrongType(json: "1", type: .integer, message: "column 'col' expects INTEGER (an integer), got string"),
        WrongType(json: false, type: .integer, message: "column 'col' expects INTEGER (an integer), got boolean"),
        WrongType(json: "1.5", type: .real, message: "column 'col' expects REAL (a number), got string"),
        WrongType(json: [1], type: .real, message: "column 'col' expects REAL (a number), got array"),
        WrongType(json: 1, type: .boolean, message: "column 'col' expects BOOLEAN (true or false), got integer"),
        WrongType(json: "true", type: .boolean, message: "column 'col' expects BOOLEAN (true or false), got string"),
        WrongType(json: 5, type: .blob, message: "column 'col' expects BLOB (a base64 string), got integer"),
        WrongType(json: [1, 2], type: .blob, message: "column 'col' expects BLOB (a base64 string), got array"),
    ]

    @Test(arguments: wrongTypes)
    func wrongTypeNamesColumnAndExpectedType(_ c: WrongType) throws {
        let error = try #require(conversionError(c.json, c.type))
        #expect(error.code == .wrongType)
        #expect(error.field == "col")
        #expect(error.message == c.message)
        #expect(error.description == "wrong_type (col): \(c.message)")
    }
}

@Suite("Value.write")
struct ValueWriteTests {
    private func text(_ value: Value) -> String {
        var writer = JSONWriter()
        value.write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func eachCase() {
        #expect(text(.null) == "null")
        #expect(text(.integer(-5)) == "-5")
        #expect(text(.real(0.5)) == "0.5")
        #expect(text(.real(.infinity)) == "null")
        #expect(text(.text("a\nb")) == #""a\nb""#)
        #expect(text(.boolean(true)) == "true")
        #expect(text(.blob(Array("hello".utf8))) == #""aGVsbG8=""#)
        #expect(text(.json(#"{"k":[1]}"#)) == #"{"k":[1]}"#)
    }

    @Test(arguments: [
        (JSONValue.string("ü"), ColumnType.text), (.int(-9), .integer), (.double(0.1), .real), (.bool(false), .boolean),
        (.string("AAECAwQ="), .blob), (JSONValue.object([JSONMember("x", [1, nil])]), .json),
    ])
    func writtenValueConvertsBack(_ json: JSONValue, _ type: ColumnType) throws {
        let column = Column(name: "c", type: type)
        let converted = try Value(json: json, for: column)
        let reparsed = try JSONParser.parse(text(converted))
        #expect(reparsed == json)
        #expect(try Value(json: reparsed, for: column) == converted)
    }
}

@Suite("ColumnType")
struct ColumnTypeTests {
    @Test func declaredNamesIgnoreCase() {
        #expect(ColumnType(declared: "text") == .text)
        #expect(ColumnType(declared: "Integer") == .integer)
        #expect(ColumnType(declared: "BLOB") == .blob)
        #expect(ColumnType(declared: "json") == .json)
        #expect(ColumnType(declared: "object") == .object)
        #expect(ColumnType(declared: "STRING") == nil)
        #expect(ColumnType(declared: "") == nil)
        #expect(ColumnType(declared: "int") == nil)
    }
}
