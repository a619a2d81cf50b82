import DallyCore
import Foundation
import GRDB

/// Conversions between ``Value`` and SQLite values, and between result rows and ``StoredRow``.
package enum RowDecoding {
    package static func databaseValue(_ value: Value) -> DatabaseValue {
        switch value {
        case .null: .null
        case .integer(let i): i.databaseValue
        case .real(let d): d.databaseValue
        case .text(let s): s.databaseValue
        case .boolean(let b): (b ? 1 : 0).databaseValue
        case .blob(let bytes): Data(bytes).databaseValue
        case .json(let text): text.databaseValue
        }
    }

    package static func value(_ dbValue: DatabaseValue, type: ColumnType) -> Value {
        switch (type, dbValue.storage) {
        case (_, .null): .null
        case (.integer, .int64(let i)): .integer(i)
        case (.boolean, .int64(let i)): .boolean(i != 0)
        case (.real, .double(let d)): .real(d)
        case (.real, .int64(let i)): .real(Double(i))
        case (.text, .string(let s)): .text(s)
        // An OBJECT column holds its reference's JSON text, shown in rows as that object.
        case (.json, .string(let s)), (.object, .string(let s)): .json(s)
        case (.blob, .blob(let data)): .blob(Array(data))
        // Anything else was written by something other than Dally; show it as it is stored.
        case (_, .int64(let i)): .integer(i)
        case (_, .double(let d)): .real(d)
        case (_, .string(let s)): .text(s)
        case (_, .blob(let data)): .blob(Array(data))
        }
    }

    /// Reads a row selected with ``TableSQL/selectList``, starting `offset` columns in.
    package static func storedRow(_ row: Row, schema: TableSchema, offset: Int = 0) -> StoredRow {
        var values: [Value] = []
        values.reserveCapacity(schema.columns.count)
        for (i, column) in schema.columns.enumerated() {
            values.append(value(row[offset + 5 + i] as DatabaseValue, type: column.type))
        }
        return StoredRow(
            id: row[offset],
            seq: row[offset + 1],
            updatedAt: row[offset + 2],
            deleted: row[offset + 3] as Int64 != 0,
            version: optionalInt(row, at: offset + 4),
            values: values
        )
    }

    /// The rows `statement` selects with ``TableSQL/selectList``, decoded as the cursor steps:
    /// copying each row first (`Row.fetchAll`) cost an array of column names a row.
    package static func storedRows(
        _ statement: Statement, arguments: StatementArguments, schema: TableSchema
    ) throws -> [StoredRow] {
        var rows: [StoredRow] = []
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try cursor.next() { rows.append(storedRow(row, schema: schema)) }
        return rows
    }

    /// Reads a nullable integer column.
    ///
    /// Not as `Int64?`: GRDB decodes an optional through `Optional`'s conditional conformance,
    /// whose generic metadata the Swift runtime looks up in a shared table on every call (a
    /// tenth of the gateway's CPU while it served pages of rows).
    package static func optionalInt(_ row: Row, at index: Int) -> Int64? {
        row.hasNull(atIndex: index) ? nil : row[index] as Int64
    }

    /// Reads a nullable text column (see ``optionalInt(_:at:)``).
    package static func optionalText(_ row: Row, at index: Int) -> String? {
        row.hasNull(atIndex: index) ? nil : row[index] as String
    }
}
