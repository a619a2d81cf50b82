import DallyCore
import GRDB

/// SQL conditions for a ``RowFilter``, values always bound.
enum FilterSQL {
    /// `expression IS NULL`, `expression IN (?, …)`, or both ORed when the list holds null.
    static func condition(_ expression: String, values: [Value], arguments: inout [DatabaseValue]) -> String {
        let concrete = values.filter { $0 != .null }
        var parts: [String] = []
        if concrete.count < values.count { parts.append("\(expression) IS NULL") }
        if !concrete.isEmpty {
            parts.append("\(expression) IN (\(Array(repeating: "?", count: concrete.count).joined(separator: ", ")))")
            arguments.append(contentsOf: concrete.map(RowDecoding.databaseValue))
        }
        return "(\(parts.joined(separator: " OR ")))"
    }

    /// The filter on the current row `alias`, ANDed; "1" for an empty filter.
    ///
    /// - Throws: `bad_query` for a column the table lacks.
    static func current(_ filter: RowFilter, table: TableSQL, alias: String, arguments: inout [DatabaseValue]) throws(DallyError)
        -> String
    {
        var tests: [String] = []
        for condition in filter.conditions {
            guard let column = table.sqlColumn(named: condition.column) else {
                throw DallyError(
                    .badQuery, "table '\(table.schema.name)' has no column '\(condition.column)'", field: "where")
            }
            tests.append(Self.condition(alias.isEmpty ? column : "\(alias).\(column)", values: condition.values, arguments: &arguments))
        }
        return tests.isEmpty ? "1" : tests.joined(separator: " AND ")
    }
}
