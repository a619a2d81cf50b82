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

    /// Creates or migrates the row table of every configured table, and returns the columns
    /// added to tables that existed before, by table name.
    ///
    /// - Throws: ``StoreError`` for a type change, a dropped column or a dropped table.
    @discardableResult
    package static func reconcile(_ tables: [some StoredTable], db: Database) throws -> [String: [DallyCore.Column]] {
        var stored: [String: [(name: String, type: String)]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, name, type FROM dally_columns ORDER BY tbl, position") {
            stored[row[0], default: []].append((row[1], row[2]))
        }
        let byName = Dictionary(tables.map { ($0.schema.name, $0) }, uniquingKeysWith: { first, _ in first })
        let steps: [ColumnPlan.Step]
        do {
            steps = try ColumnPlan.steps(stored: stored, configured: tables.map(\.schema))
        } catch {
            throw StoreError(error.message)
        }
        var added: [String: [DallyCore.Column]] = [:]
        for step in steps {
            switch step {
            case .create(let schema):
                guard let table = byName[schema.name] else { continue }
                for statement in table.createStatements { try db.execute(sql: statement) }
                try record(schema.columns, of: schema.name, from: 0, db: db)
            case .add(let schema, let columns, let from):
                guard let table = byName[schema.name] else { continue }
                for column in columns { try db.execute(sql: table.addColumnStatement(column)) }
                try record(columns, of: schema.name, from: from, db: db)
                added[schema.name, default: []] += columns
            }
        }
        return added
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
