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
/// The log is bounded: ``prune(db:)`` keeps the newest ``retained`` entries at open. A reader
/// whose cursor is older than the oldest entry may miss a `left` entry (it sees the row's next
/// state instead), so a client away that long should re-read its rows.
enum MoveLog {
    /// The entries kept across a restart; a filtered reader is rarely that many moves behind.
    static let retained = 100_000

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
                    END
                    """)
        }
        try prune(db: db)
    }

    /// Drops all but the newest ``retained`` entries.
    static func prune(db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM dally_moves WHERE seq < \
                (SELECT seq FROM dally_moves ORDER BY seq DESC LIMIT 1 OFFSET ?)
                """, arguments: [retained - 1])
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
