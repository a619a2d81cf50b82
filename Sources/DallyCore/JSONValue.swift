/// A JSON document in memory.
///
/// Dally parses request bodies into this type with its own ``JSONParser`` rather than through
/// `Codable`: rows have columns known only at run time, and the parser is on the write hot path.
/// Object members keep their order, which keeps echoed documents stable.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 bits.
    case int(Int64)
    case double(Double)
    /// A number kept as it was written, because neither `int` nor `double` holds it digit for
    /// digit: an integer beyond 64 bits (`18446744073709551615`) or a decimal with more
    /// significant digits than a Double keeps (`0.12345678901234567891`). A JSON column gives
    /// it back as it was sent, as PostgreSQL's `jsonb` does; a REAL column reads it as the
    /// nearest Double (``double``).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// The member named `key` of an object, or nil when this is not an object or has no such member.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for member in members where member.key == key { return member.value }
        return nil
    }

    /// The value of a number as the nearest Double, nil for any other type.
    public var double: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        case .number(let text): Double(text)
        default: nil
        }
    }

    /// How many arrays and objects deep the value nests: 0 for a scalar, 1 for `[1]` or `{}`.
    public var nesting: Int {
        switch self {
        // Folded, not mapped: every JSON column's write asks, and an array a level cost it.
        case .array(let elements): 1 + elements.reduce(0) { max($0, $1.nesting) }
        case .object(let members): 1 + members.reduce(0) { max($0, $1.value.nesting) }
        default: 0
        }
    }

    /// A short name of this value's JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int: "integer"
        case .double, .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// One `"key": value` member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(elements.map { JSONMember($0.0, $0.1) })
    }
}
