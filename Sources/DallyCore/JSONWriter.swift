/// Writes compact JSON into a byte array.
///
/// Used for every response body, so that rows read from SQLite go to the wire without an
/// intermediate ``JSONValue``.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Appends bytes that are already valid JSON (a literal, a punctuation mark, a stored JSON text).
    @inline(__always) public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends text that is already valid JSON.
    public mutating func rawText(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends bytes that are already valid JSON (a part encoded once and shared).
    public mutating func rawBytes(_ json: [UInt8]) {
        bytes.append(contentsOf: json)
    }

    /// Appends `"key":`.
    @inline(__always) public mutating func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Appends a quoted, escaped string.
    public mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { string(utf8: $0) }
    }

    /// Appends a quoted, escaped string from its UTF-8 bytes, which must be valid UTF-8 (text
    /// read straight from storage, with no `String` made for it).
    ///
    /// The runs between bytes that need escaping are copied whole: most text (ids, names,
    /// keys) has none, and appended byte by byte it was 2 % of `dally-bench drain`'s CPU.
    ///
    /// ```swift
    /// var writer = JSONWriter()
    /// Array("a\"b".utf8).withUnsafeBufferPointer { writer.string(utf8: $0) }  // "a\"b"
    /// ```
    public mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var run = 0
        for index in utf8.indices where Self.needsEscape(utf8[index]) {
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run..<index]))
            escape(utf8[index])
            run = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[run...]))
        bytes.append(UInt8(ascii: "\""))
    }

    @inline(__always) private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        default:
            raw("\\u00")
            bytes.append(Self.hexDigits[Int(byte >> 4)])
            bytes.append(Self.hexDigits[Int(byte & 0xF)])
        }
    }

    /// Appends an integer's decimal digits, written straight into the bytes (no `String` made
    /// for each: a page of rows has several a row).
    public mutating func int(_ value: Int64) {
        if value >= 0, value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        // 20 digits hold any UInt64; written from the last.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var first = digits.count
            repeat {
                first -= 1
                digits[first] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    /// Appends a finite double; non-finite values, which JSON cannot carry, become `null`.
    public mutating func double(_ value: Double) {
        guard value.isFinite else { return raw("null") }
        bytes.append(contentsOf: value.description.utf8)
    }

    public mutating func bool(_ value: Bool) { value ? raw("true") : raw("false") }

    public mutating func null() { raw("null") }

    /// Appends any JSON value.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        // Checked against JSON's number grammar by the parser that made it.
        case .number(let text): rawText(text)
        case .string(let s): string(s)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                key(member.key)
                self.value(member.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

extension JSONValue {
    /// The compact JSON text of this value.
    public var jsonText: String {
        var writer = JSONWriter()
        writer.value(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
