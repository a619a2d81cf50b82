/// A strict, allocation-light JSON parser (RFC 8259) producing ``JSONValue``.
///
/// Bounded by construction: nesting deeper than `maxDepth` is refused rather than recursed into,
/// so a hostile body cannot exhaust the stack. Numbers that are not finite are refused.
public struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    public static let maxDepth = 64

    /// Parses one JSON document; only white space may follow it.
    ///
    /// - Throws: ``JSONParseError`` naming the byte offset and what was expected there.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parseBuffer(UnsafeRawBufferPointer(buffer)) }
        }
        if let contiguous { return try contiguous.get() }
        let array = Array(bytes)
        return try array.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parseBuffer(buffer) }
        }.get()
    }

    /// Parses one JSON document held in a String.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private static func parseBuffer(_ buffer: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        var scanner = JSONScanner(buffer: buffer)
        scanner.skipWhitespace()
        let value = try scanner.parseValue(depth: 0)
        try scanner.end()
        return value
    }
}

/// Why a body is not valid JSON, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension DallyError {
    /// A body that is not valid JSON, as every route refuses it: `400 malformed_json`, naming
    /// the byte and what was expected there.
    public init(_ error: JSONParseError) { self.init(.malformedJSON, error.description) }
}
