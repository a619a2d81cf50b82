import DallyCore
import GRDB

/// The previous values of a row's filterable columns, kept so that a filtered changes feed can
/// tell a row that *left* its filter (it matched at the reader's cursor, no longer does) from one
/// that never matched.
///
/// Only the columns a feed may filter on are logged: a table's ``TableSchema/scopeColumns``
/// (on a gateway: `scope_columns`, the gateway scope's columns and the columns client tokens
/// are scoped on). A trigger writes one entry `(seq, tbl, row_id, old)` — `old` a JSON object of
/// those columns' values before the write — and only when a write changes one of them; an
/// insert or a write that leaves them alone costs the trigger's `WHEN` test and nothing more.
///
/// The log is bounded by a window of local sequence numbers: the trigger that logs a move also
/// deletes the entries more than ``window`` writes old (an index seek that finds at most a few),
/// and ``prune(db:)`` does the same at open. A reader whose cursor is older than the window may
/// miss a `left` entry (it sees the row's next state instead), so a client away that long should
/// re-read its rows.
enum MoveLog {
    /// How many local writes back the log reaches: at most this many entries, whatever the load.
    static let window: Int64 = 1_000_000

    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS dally_moves (
            seq INTEGER NOT NULL PRIMARY KEY,
            tbl TEXT NOT NULL,
            row_id TEXT NOT NULL,
            old TEXT NOT NULL
        )
        """,
        "CREATE INDEX IF NOT EXISTS dally_moves_row ON dally_moves (tbl, row_id, seq)",
    ]

    /// Creates the log and brings every table's trigger in line with its filterable columns
    /// (they change with the configuration, so the triggers are rebuilt at each open).
    static func install(_ tables: [TableSQL], db: Database) throws {
        for statement in createStatements { try db.execute(sql: statement) }
        for table in tables {
            let trigger = TableSQL.quote("dally_moves_\(table.schema.name)")
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(trigger)")
            let columns = table.schema.scopeColumns.compactMap { name in table.sqlColumn(named: name).map { (name, $0) } }
            guard !columns.isEmpty else { continue }
            let changed = columns.map { "old.\($0.1) IS NOT new.\($0.1)" }.joined(separator: " OR ")
            let old = columns.map { "'\($0.0)', old.\($0.1)" }.joined(separator: ", ")
            try db.execute(
                sql: """
                    CREATE TRIGGER \(trigger) AFTER UPDATE ON \(table.sqlTable) WHEN \(changed)
                    BEGIN
                        INSERT OR REPLACE INTO dally_moves (seq, tbl, row_id, old)
                        VALUES (new.seq, '\(table.schema.name)', old.id, json_object(\(old)));
                        DELETE FROM dally_moves WHERE seq <= new.seq - \(window);
                    END
                    """)
        }
        try prune(db: db)
    }

    /// Drops the entries older than ``window`` writes.
    static func prune(db: Database) throws {
        try db.execute(
            sql: "DELETE FROM dally_moves WHERE seq <= (SELECT value FROM dally_meta WHERE key = 'last_seq') - ?",
            arguments: [window])
    }

    /// SQL true when the row `alias`.id of `table` passed `filter` at local sequence `since`:
    /// its values then are the `old` of its first logged move after `since`, if any. A row with
    /// no move after `since` has the filterable values it has now, which the caller tests.
    static func matchedAt(
        _ filter: RowFilter, table: TableSQL, alias: String, arguments: inout [DatabaseValue], since: Int64
    ) -> String {
        var tests: [String] = []
        for condition in filter.conditions {
            let path = "json_extract(m.old, '$.\(condition.column)')"
            tests.append(FilterSQL.condition(path, values: condition.values, arguments: &arguments))
        }
        arguments.append(table.schema.name.databaseValue)
        arguments.append(since.databaseValue)
        return """
            COALESCE((SELECT \(tests.joined(separator: " AND ")) FROM dally_moves m \
            WHERE m.tbl = ? AND m.row_id = \(alias).id AND m.seq > ? ORDER BY m.seq LIMIT 1), 0)
            """
    }
}
