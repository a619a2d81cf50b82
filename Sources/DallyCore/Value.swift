import Foundation

/// A typed column value, as stored in the replica.
public enum Value: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case boolean(Bool)
    case blob([UInt8])
    /// A JSON column's value, kept as its compact text so that it is stored and served verbatim.
    case json(String)

    /// Converts a JSON value sent by a client into a value of `column`'s type.
    ///
    /// Integers are accepted for REAL columns, and numbers with an integral value for INTEGER
    /// columns; nothing else is coerced. BLOBs arrive as base64 strings. Text holds no U+0000
    /// (JSON's `\u0000`): SQLite's text as the replica binds it ends at the first, and
    /// PostgreSQL's text refuses it, so such a string would be stored other than it was sent.
    ///
    /// - Throws: ``DallyError`` `wrong_type` naming the column, its type and what was sent.
    public init(json: JSONValue, for column: Column) throws(DallyError) {
        switch (column.type, json) {
        case (_, .null): self = .null
        case (.text, .string(let s)):
            if let nul = s.utf8.firstIndex(of: 0) {
                let at = s.utf8.distance(from: s.utf8.startIndex, to: nul)
                throw DallyError(
                    .wrongType,
                    "column '\(column.name)' expects TEXT without U+0000 (\\u0000), which neither the replica nor "
                        + "PostgreSQL can store; got one at UTF-8 byte \(at) (send such bytes in a BLOB column, base64)",
                    field: column.name)
            }
            self = .text(s)
        case (.integer, .int(let i)): self = .integer(i)
        case (.integer, .double(let d)) where d.rounded() == d && abs(d) < 9.0e15: self = .integer(Int64(d))
        case (.real, .double(let d)): self = .real(d)
        case (.real, .int(let i)): self = .real(Double(i))
        case (.real, .number):
            guard let d = json.double else { throw .wrongType(column: column, got: "number") }
            self = .real(d)
        case (.boolean, .bool(let b)): self = .boolean(b)
        case (.blob, .string(let s)):
            // Checked by encoding back: Foundation's decoder takes some strings that are not
            // base64 ("====" came out as one zero byte), and a value must come back as it was sent.
            guard let data = Data(base64Encoded: s), data.base64EncodedString() == s else {
                throw .wrongType(column: column, got: "a string that is not base64")
            }
            self = .blob(Array(data))
        case (.json, let any):
            let levels = any.nesting
            guard levels <= Self.maxJSONNesting else {
                throw DallyError(
                    .wrongType,
                    "column '\(column.name)' expects JSON nested at most \(Self.maxJSONNesting) levels deep, got \(levels) "
                        + "(deeper values could not travel inside the sync messages, whose parser stops at \(JSONParser.maxDepth))",
                    field: column.name)
            }
            self = .json(any.jsonText)
        case (.object, let any):
            self = .json(try Self.requestedObject(any, column: column))
        default:
            throw .wrongType(column: column, got: json.typeName)
        }
    }

    /// How deeply a JSON column's value may nest (arrays and objects within each other). The
    /// sync messages carry a row's values five levels down, and every parser on the way stops
    /// at ``JSONParser/maxDepth`` levels: a row route's body held a value nested 62 levels,
    /// which no batch could carry, and every sync after it failed.
    public static let maxJSONNesting = 32

    /// An OBJECT column's value as a client writes it, `{"hash": "<64 hex digits>"}` (size and
    /// chunks may be given too and are ignored), as the compact text `{"hash":"<lowercase hex>"}`.
    ///
    /// Only the hash is taken from the client: the store checks, inside the write's
    /// transaction, that it names an object this gateway holds whole, and stores the full
    /// reference (`{"hash","size","chunks"}`) it knows for it. The bytes themselves are
    /// uploaded first, through the objects API.
    static func requestedObject(_ json: JSONValue, column: Column) throws(DallyError) -> String {
        guard case .string(let hex)? = json["hash"], hex.utf8.count == 64,
            hex.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) })
        else {
            throw DallyError(
                .wrongType,
                "column '\(column.name)' is an OBJECT column: give {\"hash\": \"<64 hex digits>\"} of an object uploaded to this gateway (POST /v1/objects), or null",
                field: column.name)
        }
        return #"{"hash":""# + hex.lowercased() + #""}"#
    }

    /// Writes this value as JSON: BLOBs as base64 strings, JSON columns verbatim.
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.null()
        case .integer(let i): writer.int(i)
        case .real(let d): writer.double(d)
        case .text(let s): writer.string(s)
        case .boolean(let b): writer.bool(b)
        case .blob(let bytes): writer.string(Data(bytes).base64EncodedString())
        case .json(let text): writer.rawText(text)
        }
    }
}

extension DallyError {
    public static func wrongType(column: Column, got: String) -> DallyError {
        DallyError(
            .wrongType,
            "column '\(column.name)' expects \(column.type.rawValue) (\(column.type.jsonShape)), got \(got)",
            field: column.name
        )
    }
}

extension ColumnType {
    /// How a value of this type is written in JSON, for error messages.
    public var jsonShape: String {
        switch self {
        case .text: "a string"
        case .integer: "an integer"
        case .real: "a number"
        case .boolean: "true or false"
        case .blob: "a base64 string"
        case .json: "any JSON value"
        case .object: "an object reference"
        }
    }
}

extension Value {
    /// About how many bytes this value takes in a batch's JSON, without writing it: what the
    /// scheduler weighs pending changes by (its size bound), not an exact count.
    public var wireSizeEstimate: Int {
        switch self {
        case .null: 4
        case .integer(let i): i < 0 ? 20 : (i < 1_000_000 ? 6 : 19)
        case .real: 18
        case .text(let s): s.utf8.count + 2
        case .boolean: 5
        case .blob(let bytes): (bytes.count + 2) / 3 * 4 + 2
        case .json(let text): text.utf8.count
        }
    }
}
