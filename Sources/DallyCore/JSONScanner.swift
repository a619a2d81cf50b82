/// Reads a JSON document one token at a time, for a decoder that builds its own types straight
/// from the bytes instead of from a ``JSONValue`` tree (the cloud's batch bodies: a tree of
/// thousands of row arrays cost more than the values in it). ``JSONParser`` is built on it, so
/// both accept exactly the same documents.
///
/// ```swift
/// let names = try JSONScanner.scan(Array(#"["a", "b"]"#.utf8)) { scanner throws(JSONParseError) in
///     var names: [String] = []
///     try scanner.expect(UInt8(ascii: "["))
///     if !scanner.take(UInt8(ascii: "]")) {
///         repeat { names.append(try scanner.string()) } while try scanner.next(closing: UInt8(ascii: "]"))
///     }
///     try scanner.end()
///     return names
/// }
/// ```
public struct JSONScanner {
    let buffer: UnsafeRawBufferPointer
    var index = 0

    init(buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
        // RFC 8259 §8.1 lets a parser ignore a leading byte order mark, and Windows tools send
        // one (a file saved by Notepad before 2019, posted with PowerShell's `-InFile`): skipped,
        // instead of refusing the body at byte 0 for a character its sender cannot see. Offsets
        // in errors still count from the body's first byte.
        if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { index = 3 }
    }

    /// Runs `body` with a scanner at the start of `bytes`; the scanner is valid only inside it.
    public static func scan<T>(
        _ bytes: [UInt8], _ body: (inout JSONScanner) throws(JSONParseError) -> T
    ) throws(JSONParseError) -> T {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) -> T in
                var scanner = JSONScanner(buffer: buffer)
                return try body(&scanner)
            }
        }.get()
    }

    /// An error at the scanner's position.
    public func error(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    /// Skips white space and consumes `byte`, or throws.
    public mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        skipWhitespace()
        guard index < buffer.count, buffer[index] == byte else {
            throw error("expected '\(Character(Unicode.Scalar(byte)))'")
        }
        index += 1
    }

    /// Skips white space and consumes `byte` if it comes next.
    public mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard index < buffer.count, buffer[index] == byte else { return false }
        index += 1
        return true
    }

    /// After a member or element: true past a `,` (another follows), false past `closing`.
    public mutating func next(closing: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard index < buffer.count else { throw error("unexpected end of input") }
        if buffer[index] == UInt8(ascii: ",") { index += 1; return true }
        if buffer[index] == closing { index += 1; return false }
        throw error("expected ',' or '\(Character(Unicode.Scalar(closing)))'")
    }

    /// A string, after white space.
    public mutating func string() throws(JSONParseError) -> String {
        skipWhitespace()
        guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { throw error("expected a string") }
        return try parseString()
    }

    /// Whether the string that comes next (after white space) is `literal`, consumed if so;
    /// nothing is consumed otherwise. Compares bytes: no string is made.
    public mutating func take(string literal: StaticString) -> Bool {
        skipWhitespace()
        let count = literal.utf8CodeUnitCount
        guard index + count + 2 <= buffer.count, buffer[index] == UInt8(ascii: "\""),
            buffer[index + count + 1] == UInt8(ascii: "\"")
        else { return false }
        let bytes = UnsafeRawBufferPointer(start: literal.utf8Start, count: count)
        for i in 0..<count where buffer[index + 1 + i] != bytes[i] { return false }
        index += count + 2
        return true
    }

    /// Consumes `null` if it comes next (after white space).
    public mutating func takeNull() -> Bool {
        skipWhitespace()
        guard index + 4 <= buffer.count, buffer[index] == UInt8(ascii: "n") else { return false }
        guard buffer[index + 1] == UInt8(ascii: "u"), buffer[index + 2] == UInt8(ascii: "l"),
            buffer[index + 3] == UInt8(ascii: "l")
        else { return false }
        index += 4
        return true
    }

    /// Any value, after white space; `depth` is how deeply the caller has nested already.
    public mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        return try parseValue(depth: depth)
    }

    /// Only white space may follow.
    public mutating func end() throws(JSONParseError) {
        skipWhitespace()
        guard index == buffer.count else { throw error("unexpected data after the JSON document") }
    }

    @inline(__always) mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < buffer.count else { throw error("unexpected end of input, expected a value") }
        switch buffer[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character, expected a value")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= buffer.count else { throw error("unexpected end of input in literal") }
        let bytes = UnsafeRawBufferPointer(start: literal.utf8Start, count: count)
        for i in 0..<count where buffer[index + i] != bytes[i] { throw error("invalid literal") }
        index += count
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= JSONParser.maxDepth else { throw error("nesting deeper than \(JSONParser.maxDepth)") }
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key, try parseValue(depth: depth)))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input in object") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= JSONParser.maxDepth else { throw error("nesting deeper than \(JSONParser.maxDepth)") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input in array") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw error("expected ',' or ']'")
        }
    }

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        var bits: UInt8 = 0
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") {
                let text: String
                if bits < 0x80 {
                    // ASCII needs no validation; `String(validating:)` looked up generic
                    // metadata at every call, a fifth of a batch body's decoding.
                    text = UnsafeRawBufferPointer(rebasing: buffer[start..<index]).withMemoryRebound(to: UInt8.self) {
                        String(decoding: $0, as: UTF8.self)
                    }
                } else {
                    guard let valid = String(validating: UnsafeRawBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
                    else { throw error("invalid UTF-8 in string") }
                    text = valid
                }
                index += 1
                return text
            }
            bits |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in string") }
            index += 1
        }
        var bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[start..<index]))
        while index < buffer.count {
            let byte = buffer[index]
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: bytes, as: UTF8.self) else { throw error("invalid UTF-8 in string") }
                index += 1
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < buffer.count else { throw error("unexpected end of input in escape") }
                let escape = buffer[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &bytes)
                default: throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("control character in string") }
                bytes.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    mutating func readHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= buffer.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = buffer[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func appendUnicodeEscape(to bytes: inout [UInt8]) throws(JSONParseError) {
        var scalar = try readHex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard index + 2 <= buffer.count, buffer[index] == UInt8(ascii: "\\"), buffer[index + 1] == UInt8(ascii: "u")
            else { throw error("unpaired surrogate in \\u escape") }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error("unpaired surrogate in \\u escape")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid code point") }
        bytes.append(contentsOf: String(Character(unicode)).utf8)
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var negative = false
        if buffer[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        guard index < buffer.count, Self.isDigit(buffer[index]) else { throw error("expected a digit") }
        if buffer[index] == UInt8(ascii: "0"), index + 1 < buffer.count, Self.isDigit(buffer[index + 1]) {
            throw error("leading zero in number")
        }
        // Every digit, the fraction's too, in one integer while they fit: an integer's value, or
        // a decimal's significand.
        var magnitude: UInt64 = 0
        var overflow = false
        var fractionDigits = 0
        func take(_ digit: UInt8) {
            let (m1, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (m2, o2) = m1.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            magnitude = m2
            overflow = overflow || o1 || o2
        }
        while index < buffer.count, Self.isDigit(buffer[index]) {
            take(buffer[index])
            index += 1
        }
        var isInteger = true
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < buffer.count, Self.isDigit(buffer[index]) else { throw error("expected a digit after '.'") }
            while index < buffer.count, Self.isDigit(buffer[index]) {
                take(buffer[index])
                fractionDigits += 1
                index += 1
            }
        }
        var exponent = 0
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            var exponentNegative = false
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                exponentNegative = buffer[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < buffer.count, Self.isDigit(buffer[index]) else { throw error("expected a digit in exponent") }
            while index < buffer.count, Self.isDigit(buffer[index]) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(buffer[index] - UInt8(ascii: "0")) }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        if isInteger, !overflow {
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                return .int(magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude))
            }
            if !negative, magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
        }
        // A significand and a power of ten both exact in a Double are one correctly rounded
        // multiplication or division apart (Clinger's fast path): most decimals JSON carries, read
        // without making a string of them for `Double(_:)`.
        let power = exponent - fractionDigits
        let digits = UnsafeRawBufferPointer(rebasing: buffer[start..<index])
        // Up to 15 significant digits, every decimal is the shortest text of the Double nearest
        // it, so it comes back as it was sent; beyond, the Double may lose digits
        // (``DecimalText``).
        if !isInteger, !overflow, magnitude <= 1 << 53, power >= -22, power <= 22 {
            let scale = Self.exactPowersOfTen[abs(power)]
            let value = power >= 0 ? Double(magnitude) * scale : Double(magnitude) / scale
            let signed = negative ? -value : value
            if magnitude < Self.fifteenDigits || DecimalText.isHeld(digits, by: signed) { return .double(signed) }
            return .number(String(decoding: digits, as: UTF8.self))
        }
        let text = String(decoding: digits, as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            index = start
            throw error("number out of range")
        }
        return DecimalText.isHeld(digits, by: double) ? .double(double) : .number(text)
    }

    /// 10^15: a significand below it has at most 15 digits.
    private static let fifteenDigits: UInt64 = 1_000_000_000_000_000

    @inline(__always) private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// 10^0 … 10^22: every one exact in a Double.
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]
}
