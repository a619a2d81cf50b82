import DallyCore
import DallyStore
import GRDB

/// The SQL behind scoped pages for one table with `scope_columns` (PROTOCOL.md §7.4).
///
/// - **Scope index**: one index per scope column, `(c_col, version)`, so a page of the rows in
///   a scope reads only those rows, not the table.
/// - **Move log**: `"m_<table>"(version, id, c_col…)`, filled by a trigger on the table: when a
///   change alters a live row's scope columns, or deletes it, the log keeps the row's *old*
///   scope values at the change's version. A gateway's page joins the rows that were in its
///   scope before a change after its cursor took them out, and only those: a change that
///   leaves no trace in the scope columns costs the other gateways nothing.
///
/// The trigger lives in SQL so that every writer of the table (the batch applier today, any
/// upkeep tomorrow) logs its moves in the same transaction as the change.
struct CloudScopeSQL: Sendable {
    let table: CloudTableSQL
    let movesTable: String
    /// The scope columns, quoted, in `scope_columns` order.
    let scopeColumns: [String]

    init?(_ table: CloudTableSQL) {
        let names = table.schema.scopeColumns
        guard !names.isEmpty else { return nil }
        self.table = table
        movesTable = TableSQL.quote("m_\(table.schema.name)")
        scopeColumns = names.map { TableSQL.quote("c_\($0)") }
    }

    /// Brings the log, its trigger and the indexes to the configured scope columns; idempotent,
    /// run at every open. A log whose columns differ from the configuration is started anew:
    /// a gateway whose cursor is older than that misses the `left` entries of moves before it.
    func install(db: Database) throws {
        let name = table.schema.name
        let wanted = ["version", "id"] + table.schema.scopeColumns.map { "c_\($0)" }
        let existing = try Row.fetchAll(db, sql: "PRAGMA table_info(\(movesTable))").map { $0["name"] as String }
        if !existing.isEmpty && existing != wanted {
            try db.execute(sql: "DROP TABLE \(movesTable)")
        }
        let types = table.schema.scopeColumns.compactMap { table.schema.column(named: $0) }
            .map { TableSQL.storageType($0.type) }
        let columns = zip(scopeColumns, types).map { "\($0) \($1)" }
        try db.execute(
            sql: "CREATE TABLE IF NOT EXISTS \(movesTable) (version INTEGER NOT NULL, id TEXT NOT NULL, "
                + columns.joined(separator: ", ") + ")")
        try db.execute(
            sql: "CREATE INDEX IF NOT EXISTS \(TableSQL.quote("m_\(name)_version")) ON \(movesTable)(version)")
        for (column, quoted) in zip(table.schema.scopeColumns, scopeColumns) {
            try db.execute(
                sql: "CREATE INDEX IF NOT EXISTS \(TableSQL.quote("t_\(name)_scope_\(column)")) "
                    + "ON \(table.sqlTable)(\(quoted), version)")
            try db.execute(
                sql: "CREATE INDEX IF NOT EXISTS \(TableSQL.quote("m_\(name)_scope_\(column)")) "
                    + "ON \(movesTable)(\(quoted), version)")
        }
        let trigger = TableSQL.quote("t_\(name)_moves")
        let changed = scopeColumns.map { "OLD.\($0) IS NOT NEW.\($0)" }.joined(separator: " OR ")
        try db.execute(sql: "DROP TRIGGER IF EXISTS \(trigger)")
        try db.execute(
            sql: """
                CREATE TRIGGER \(trigger) AFTER UPDATE ON \(table.sqlTable)
                WHEN OLD.deleted = 0 AND (NEW.deleted <> 0 OR \(changed))
                BEGIN
                    INSERT INTO \(movesTable) (version, id, \(scopeColumns.joined(separator: ", ")))
                    VALUES (NEW.version, OLD.id, \(scopeColumns.map { "OLD.\($0)" }.joined(separator: ", ")));
                END
                """)
    }

    /// `c_a IN (?, ?) AND c_b IN (?)` for `scope`, with its arguments.
    private func condition(_ scope: TypedScope, alias: String) -> (String, [DatabaseValue]) {
        var parts: [String] = []
        var arguments: [DatabaseValue] = []
        for condition in scope.conditions {
            let places = Array(repeating: "?", count: condition.values.count).joined(separator: ", ")
            parts.append("\(alias).\(TableSQL.quote("c_\(condition.column)")) IN (\(places))")
            arguments.append(contentsOf: condition.values.map(RowDecoding.databaseValue))
        }
        return (parts.joined(separator: " AND "), arguments)
    }

    /// The rows in `scope` changed after `since`, then the rows a change after `since` took out
    /// of it, each at most `limit` and in version order; the caller merges them.
    func fetch(
        scope: TypedScope, since: Int64, limit: Int, excludingReplica: String?, db: Database
    ) throws -> (inScope: [Row], movedOut: [Row]) {
        let list = (["t.id", "t.version", "t.updated_at", "t.deleted"] + table.sqlColumns.map { "t.\($0)" })
            .joined(separator: ", ")
        let foreign = excludingReplica == nil ? "" : " AND t.origin <> ?"
        let foreignArgument: [DatabaseValue] = excludingReplica.map { [$0.databaseValue] } ?? []
        let (current, currentArguments) = condition(scope, alias: "t")
        let inScope = try Row.fetchAll(
            db,
            sql: "SELECT \(list) FROM \(table.sqlTable) t WHERE \(current) AND t.version > ?\(foreign) "
                + "ORDER BY t.version LIMIT ?",
            arguments: StatementArguments(
                currentArguments + [since.databaseValue] + foreignArgument + [Int64(limit).databaseValue]))
        let (old, oldArguments) = condition(scope, alias: "m")
        let movedOut = try Row.fetchAll(
            db,
            sql: "SELECT \(list) FROM \(table.sqlTable) t WHERE t.id IN "
                + "(SELECT m.id FROM \(movesTable) m WHERE \(old) AND m.version > ?) "
                + "AND t.version > ?\(foreign) ORDER BY t.version LIMIT ?",
            arguments: StatementArguments(
                oldArguments + [since.databaseValue, since.databaseValue] + foreignArgument
                    + [Int64(limit).databaseValue]))
        return (inScope, movedOut)
    }
}
