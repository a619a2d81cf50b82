import DallyCore
import DallySync
import Foundation
import GRDB
import GRDBSQLite

/// Reads a stored column straight into the value a batch carries, by SQLite's own calls.
///
/// The same value as ``RowDecoding/value(_:type:)`` followed by `Value.wireJSON`, without
/// GRDB's `DatabaseValue` and Dally's ``Value`` on the way: a batch's build reads every column
/// of thousands of rows, and the two conversions cost more than SQLite's read of them.
/// ``write(_:at:type:into:)`` writes the same value's JSON without making it.
///
/// ```swift
/// let statement = try db.cachedStatement(sql: "SELECT c_qty FROM t_orders")
/// let rows = try Row.fetchCursor(statement)
/// while try rows.next() != nil {
///     let qty = WireColumn.value(statement.sqliteStatement, at: 0, type: .integer)  // .int(3)
/// }
/// ```
enum WireColumn {
    /// Writes column `index` of the row `statement` stands on as JSON, exactly as
    /// ``value(_:at:type:)``'s value writes. ASCII text (ids, codes, most names) is copied from
    /// SQLite's buffer with no `String` made for it; any other value goes through
    /// ``value(_:at:type:)`` (a number or a flag makes no allocation there).
    static func write(_ statement: SQLiteStatement, at index: Int32, type: ColumnType, into json: inout JSONWriter) {
        if sqlite3_column_type(statement, index) == SQLITE_TEXT, type != .json, type != .object,
            let text = sqlite3_column_text(statement, index),
            let length = asciiLength(text, stored: Int(sqlite3_column_bytes(statement, index)))
        {
            return json.string(utf8: UnsafeBufferPointer(start: text, count: length))
        }
        // Text not ASCII among them: its `String` repairs any invalid UTF-8, as the value does.
        json.value(value(statement, at: index, type: type))
    }

    /// The length of `text` as `String(cString:)` reads it (``Statement/text(_:at:)``): up to a
    /// first NUL, within the `stored` bytes; nil when a byte up to there is not ASCII.
    private static func asciiLength(_ text: UnsafePointer<UInt8>, stored: Int) -> Int? {
        var length = 0
        while length < stored, text[length] != 0 {
            guard text[length] < 0x80 else { return nil }
            length += 1
        }
        return length
    }

    /// Column `index` of the row `statement` stands on, read for a column of type `type`.
    static func value(_ statement: SQLiteStatement, at index: Int32, type: ColumnType) -> JSONValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER:
            let int = sqlite3_column_int64(statement, index)
            switch type {
            case .boolean: return .bool(int != 0)
            case .real: return .double(Double(int))
            default: return .int(int)
            }
        case SQLITE_FLOAT:
            return .double(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            let text = Statement.text(statement, at: index)
            switch type {
            // An OBJECT column holds its reference's JSON text, and Dally wrote JSON text from
            // a parsed document; text that does not parse goes as the string (`wireJSON`).
            case .json, .object: return (try? JSONParser.parse(text)) ?? .string(text)
            default: return .string(text)
            }
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard let bytes = sqlite3_column_blob(statement, index), count > 0 else { return .string("") }
            return .string(Data(bytes: bytes, count: count).base64EncodedString())
        default:
            return .null
        }
    }
}
