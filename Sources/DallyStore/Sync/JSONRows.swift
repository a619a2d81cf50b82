import DallyCore

/// Rows handed to one SQL statement as a single JSON argument, `[[a, b, …], …]`, which the
/// statement reads with `json_each` and `json_extract(value, '$[i]')`: one statement for a
/// whole set instead of one per row.
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
}
