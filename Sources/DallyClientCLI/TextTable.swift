import DallyClient

/// Text laid out in aligned columns for `--output table`.
public enum TextTable {
    /// Rows as a table: `table` (in a feed across tables), `id`, `seq`, `deleted`, `version`,
    /// then one column per value, by name.
    public static func rows(_ rows: [Row<JSONValue>], header: Bool = true) -> String {
        var names: [String] = []
        for row in rows {
            guard case .object(let members)? = row.values else { continue }
            for member in members where !names.contains(member.key) { names.append(member.key) }
        }
        names.sort()
        let withTable = rows.contains { $0.table != nil }
        var head = (withTable ? ["table"] : []) + ["id", "seq", "deleted", "version"]
        head += names
        let lines = rows.map { row in
            var cells = (withTable ? [row.table ?? ""] : []) + [
                row.id, String(row.seq), String(row.deleted), row.version.map(String.init) ?? "null",
            ]
            cells += names.map { name in row.values?[name].map(cell) ?? "" }
            return cells
        }
        return layout(header ? [head] + lines : lines)
    }

    /// Every leaf of a document as `path value`, paths joined with dots.
    public static func leaves(_ value: JSONValue) -> String {
        var lines: [[String]] = []
        func walk(_ value: JSONValue, _ path: String) {
            switch value {
            case .object(let members) where !members.isEmpty:
                for member in members.sorted(by: { $0.key < $1.key }) {
                    walk(member.value, path.isEmpty ? member.key : path + "." + member.key)
                }
            case .array(let elements) where !elements.isEmpty:
                for (index, element) in elements.enumerated() { walk(element, path + "[\(index)]") }
            default:
                lines.append([path, cell(value)])
            }
        }
        walk(value, "")
        return layout(lines)
    }

    /// A value as a table cell: strings bare, everything else as JSON.
    static func cell(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return (try? OutputFormat.jsonLine(value)) ?? ""
    }

    /// `lines` of cells, each column padded to its widest cell, two spaces apart.
    public static func layout(_ lines: [[String]]) -> String {
        guard let columns = lines.map(\.count).max() else { return "" }
        var widths = Array(repeating: 0, count: columns)
        for line in lines { for (i, cell) in line.enumerated() { widths[i] = max(widths[i], cell.count) } }
        return lines.map { line in
            line.enumerated().map { i, cell in
                i == line.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
