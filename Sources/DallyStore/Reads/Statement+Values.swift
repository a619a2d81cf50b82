import Foundation
import GRDB
import GRDBSQLite

extension Statement {
    /// Executes the statement once with `values`, one for each of its parameters in order.
    ///
    /// The values are bound with SQLite's own calls. GRDB's way there costs more than the
    /// statement for a short row: its `StatementArguments` initializers are generic, and called
    /// from another module they run unspecialized (the key path one builds `\.databaseValue`
    /// anew at each call, type names demangled included), and its checked execution nests a
    /// closure per argument. A tenth of the cloud's CPU applying a batch went there
    /// (docs/BENCHMARKS.md).
    ///
    /// ```swift
    /// try db.cachedStatement(sql: "INSERT INTO t (id, n) VALUES (?, ?)")
    ///     .execute(values: ["a".databaseValue, 1.databaseValue])
    /// ```
    ///
    /// - Throws: ``StoreError`` when `values` does not fill the statement's parameters exactly;
    ///   a `DatabaseError` when SQLite refuses a value or the statement fails.
    package func execute(values: [DatabaseValue]) throws {
        try bind(values: values)
        try execute()
    }

    /// Binds `values` to the statement's parameters, for a fetch that follows without
    /// arguments (`Row.fetchOne(statement)`); see ``execute(values:)``.
    package func bind(values: [DatabaseValue]) throws {
        let parameters = Int(sqlite3_bind_parameter_count(sqliteStatement))
        guard parameters == values.count else {
            throw StoreError("\(values.count) values for the \(parameters) parameters of \(sql)")
        }
        // No arguments, as far as GRDB knows, and bindings cleared: whatever ran this cached
        // statement before, `execute()` then only resets it and steps.
        setUncheckedArguments(StatementArguments())
        for (offset, value) in values.enumerated() {
            let code = Self.bind(value, at: Int32(offset + 1), to: sqliteStatement)
            guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), sql: sql) }
        }
    }

    /// Steps the statement, bound with ``bind(values:)``, once: `read` takes the first row's
    /// columns by SQLite's own calls; nil when there is no row. The statement is reset after.
    ///
    /// For a lookup made once a row of a batch: GRDB's `Row.fetchOne` builds a cursor and a row
    /// object for it, which cost the cloud eleven times what SQLite's search did (a tenth of its
    /// CPU applying a batch of new rows, docs/BENCHMARKS.md).
    ///
    /// ```swift
    /// let lookup = try db.cachedStatement(sql: "SELECT version FROM t WHERE id = ?")
    /// try lookup.bind(values: ["a".databaseValue])
    /// let version = try lookup.readFirstRow { sqlite3_column_int64($0, 0) }
    /// ```
    ///
    /// - Throws: a `DatabaseError` when the statement fails.
    package func readFirstRow<T>(_ read: (SQLiteStatement) -> T) throws -> T? {
        defer { sqlite3_reset(sqliteStatement) }
        switch sqlite3_step(sqliteStatement) {
        case SQLITE_ROW:
            return read(sqliteStatement)
        case SQLITE_DONE:
            return nil
        case let code:
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement))), sql: sql)
        }
    }

    /// The text of column `index` of the row `statement` stands on; "" for NULL.
    package static func text(_ statement: SQLiteStatement, at index: Int32) -> String {
        sqlite3_column_text(statement, index).map { String(cString: $0) } ?? ""
    }

    /// SQLite copies text and blobs at once (`SQLITE_TRANSIENT`): nothing points into Swift
    /// memory after the call. Text and blobs bind as GRDB binds them (text up to its first NUL,
    /// an empty blob as NULL), so that a row is stored the same whichever way it was written.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func bind(_ value: DatabaseValue, at index: Int32, to statement: SQLiteStatement) -> Int32 {
        switch value.storage {
        case .null:
            return sqlite3_bind_null(statement, index)
        case .int64(let int):
            return sqlite3_bind_int64(statement, index, int)
        case .double(let double):
            return sqlite3_bind_double(statement, index, double)
        case .string(let string):
            return sqlite3_bind_text(statement, index, string, -1, transient)
        case .blob(let data):
            return data.withUnsafeBytes { bytes in
                sqlite3_bind_blob(statement, index, bytes.baseAddress, Int32(bytes.count), transient)
            }
        }
    }
}
