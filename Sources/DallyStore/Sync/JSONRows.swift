import DallyCore

/// Rows handed to one SQL statement as a single JSON argument, `[[a, b, …], …]`, which the
/// statement reads with `json_each` and `json_extract(value, '$[i]')`: one statement for a
/// whole set instead of one per row.
///
/// Where each row is one string, ``strings(_:)`` hands them flat, `["a", "b", …]`: `json_each`
/// gives each as its `value` and its position as its `key`, with no `json_extract`, which
/// SQLite 3.40 runs by parsing the element's text again at every call (recording a 5,000-row
/// batch in flight took 1.4–1.7 µs a row so against 3.0–3.2 with triples;
/// docs/BENCHMARKS.md).
enum JSONRows {
    /// A JSON cell: a string or an integer.
    enum Cell {
        case text(String)
        case int(Int64)
    }

    static func text<S: Sequence>(_ rows: S, cells: (S.Element) -> [Cell]) -> String {
        var writer = JSONWriter(capacity: 1024)
        writer.raw("[")
        for (index, row) in rows.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw("[")
            for (position, cell) in cells(row).enumerated() {
                if position > 0 { writer.raw(",") }
                switch cell {
                case .text(let text): writer.string(text)
                case .int(let value): writer.int(value)
                }
            }
            writer.raw("]")
        }
        writer.raw("]")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func strings(_ values: some Sequence<String>) -> String {
        var writer = JSONWriter(capacity: 1024)
        writer.raw("[")
        for (index, value) in values.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.string(value)
        }
        writer.raw("]")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Whether `json`, a flat array ``strings(_:)`` wrote, holds exactly `values`, in order:
    /// compared byte for byte, without writing the values as JSON again. A value with a byte
    /// JSON may escape (a quote, a backslash, a control character) answers false, as does any
    /// difference: the caller then reads the array (``decodeStrings(_:)``).
    static func holds(exactly values: some Sequence<String>, json: String) -> Bool {
        var json = json
        return json.withUTF8 { array in
            guard array.first == UInt8(ascii: "["), array.last == UInt8(ascii: "]") else { return false }
            var at = 1
            for var value in values {
                if at > 1 {
                    guard array[at] == UInt8(ascii: ",") else { return false }
                    at += 1
                }
                let matched = value.withUTF8 { bytes -> Bool in
                    guard at + bytes.count + 1 < array.count, array[at] == UInt8(ascii: "\"") else { return false }
                    for (offset, byte) in bytes.enumerated() {
                        guard byte >= 0x20, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"),
                            array[at + 1 + offset] == byte
                        else { return false }
                    }
                    return array[at + 1 + bytes.count] == UInt8(ascii: "\"")
                }
                guard matched else { return false }
                at += value.utf8.count + 2
            }
            return at == array.count - 1
        }
    }

    /// The strings of a flat array ``strings(_:)`` wrote.
    static func decodeStrings(_ json: String) throws -> [String] {
        guard case .array(let values) = try JSONParser.parse(json) else { throw StoreError("expected a JSON array of ids") }
        return try values.map { value in
            guard case .string(let id) = value else { throw StoreError("expected a JSON array of ids") }
            return id
        }
    }
}
