import DallyClient
import Foundation

/// How `dally client` prints answers: `json` (one compact JSON document per line, keys sorted:
/// for scripts and `jq`) or `table` (aligned columns: for people).
public enum OutputFormat: String, CaseIterable, Sendable {
    case json
    case table

    /// One document as a line of JSON.
    public static func jsonLine(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Rows: a JSON line each, or one table with a column per field.
    public func render(rows: [Row<JSONValue>], header: Bool = true) throws -> String {
        switch self {
        case .json: return try rows.map { try Self.jsonLine($0) }.joined(separator: "\n")
        case .table: return TextTable.rows(rows, header: header)
        }
    }

    /// Any other document: a JSON line, or one `key.path  value` line per leaf.
    public func render(document: some Encodable) throws -> String {
        switch self {
        case .json: return try Self.jsonLine(document)
        case .table:
            let value = try JSONDecoder().decode(JSONValue.self, from: Data(Self.jsonLine(document).utf8))
            return TextTable.leaves(value)
        }
    }
}
