import DallyCore
import GRDB

/// Brings a database's row tables in line with the configured tables, for the replica and the
/// cloud alike.
///
/// The catalogue `dally_columns` remembers each table's columns as last opened. On open, a
/// column or table that is new in the configuration is added; a column whose type changed, a
/// column that disappeared or a table that disappeared is refused, because going on would
/// silently drop or reinterpret data a client was told is saved.
package enum ColumnCatalogue {
    package static let createStatement = """
        CREATE TABLE dally_columns (
            tbl TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,
            PRIMARY KEY (tbl, name)
        ) WITHOUT ROWID
        """

    /// Creates or migrates the row table of every configured table.
    ///
    /// - Throws: ``StoreError`` for a type change, a dropped column or a dropped table.
    package static func reconcile(_ tables: [some StoredTable], db: Database) throws {
        var stored: [String: [(name: String, type: String)]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, name, type FROM dally_columns ORDER BY tbl, position") {
            stored[row[0], default: []].append((row[1], row[2]))
        }
        let configured = Set(tables.map(\.schema.name))
        for name in stored.keys.sorted() where !configured.contains(name) {
            throw StoreError(
                "table '\(name)' holds data in the database but is no longer in the configuration; "
                    + "declare it again (dropping a table is not supported), or start with an empty data directory"
            )
        }
        for table in tables {
            let schema = table.schema
            guard let existing = stored[schema.name] else {
                for statement in table.createStatements { try db.execute(sql: statement) }
                try record(schema.columns, of: schema.name, from: 0, db: db)
                continue
            }
            for old in existing {
                guard let now = schema.column(named: old.name) else {
                    throw StoreError(
                        "column '\(schema.name).\(old.name)' (\(old.type)) is in the database but not in the "
                            + "configuration; dropping a column is not supported: declare it again"
                    )
                }
                guard now.type.rawValue == old.type else {
                    throw StoreError(
                        "column '\(schema.name).\(old.name)' is \(old.type) in the database but \(now.type.rawValue) "
                            + "in the configuration; changing a column's type is not supported: add a new column instead"
                    )
                }
            }
            let added = schema.columns.filter { column in !existing.contains { $0.name == column.name } }
            for column in added { try db.execute(sql: table.addColumnStatement(column)) }
            try record(added, of: schema.name, from: existing.count, db: db)
        }
    }

    private static func record(_ columns: [DallyCore.Column], of table: String, from position: Int, db: Database) throws {
        for (offset, column) in columns.enumerated() {
            try db.execute(
                sql: "INSERT INTO dally_columns (tbl, position, name, type) VALUES (?, ?, ?, ?)",
                arguments: [table, position + offset, column.name, column.type.rawValue]
            )
        }
    }
}
