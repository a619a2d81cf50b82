import DallyCore
import Logging
import PostgresNIO

/// The SQL behind scoped pages for one table with `scope_columns`, in PostgreSQL: the same
/// scope indexes, move log (`"m_<table>"`) and trigger as the SQLite store's
/// (`CloudScopeSQL`), so both backends deliver, and send as `left`, the same rows.
struct PostgresScopeSQL: Sendable {
    let table: PostgresTableSQL
    let movesTable: String
    let scopeColumns: [String]

    init?(_ table: PostgresTableSQL) {
        let names = table.schema.scopeColumns
        guard !names.isEmpty else { return nil }
        self.table = table
        movesTable = PostgresTableSQL.quote("m_\(table.schema.name)")
        scopeColumns = names.map { PostgresTableSQL.quote("c_\($0)") }
    }

    /// Brings the log, its trigger and the indexes to the configured scope columns; idempotent,
    /// run under the migrations' advisory lock at every open.
    func install(on connection: PostgresConnection, logger: Logger) async throws {
        let name = table.schema.name
        let wanted = ["version", "id"] + table.schema.scopeColumns.map { "c_\($0)" }
        var existing: [String] = []
        let rows = try await connection.query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \("m_\(name)") ORDER BY ordinal_position",
            logger: logger)
        for try await column in rows.decode(String.self) { existing.append(column) }
        var statements: [String] = []
        if !existing.isEmpty && existing != wanted { statements.append("DROP TABLE \(movesTable)") }
        let types = table.schema.scopeColumns.compactMap { table.schema.column(named: $0) }
            .map { PostgresTableSQL.storageType($0.type) }
        let columns = zip(scopeColumns, types).map { "\($0) \($1)" }
        statements.append(
            "CREATE TABLE IF NOT EXISTS \(movesTable) (version BIGINT NOT NULL, id TEXT NOT NULL, "
                + columns.joined(separator: ", ") + ")")
        statements.append(
            "CREATE INDEX IF NOT EXISTS \(PostgresTableSQL.quote("m_\(name)_version")) ON \(movesTable)(version)")
        for (column, quoted) in zip(table.schema.scopeColumns, scopeColumns) {
            statements.append(
                "CREATE INDEX IF NOT EXISTS \(PostgresTableSQL.quote("t_\(name)_scope_\(column)")) "
                    + "ON \(table.sqlTable)(\(quoted), version)")
            statements.append(
                "CREATE INDEX IF NOT EXISTS \(PostgresTableSQL.quote("m_\(name)_scope_\(column)")) "
                    + "ON \(movesTable)(\(quoted), version)")
        }
        let function = PostgresTableSQL.quote("m_\(name)_log")
        let trigger = PostgresTableSQL.quote("t_\(name)_moves")
        let changed = scopeColumns.map { "OLD.\($0) IS DISTINCT FROM NEW.\($0)" }.joined(separator: " OR ")
        statements.append(
            """
            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NOT OLD.deleted AND (NEW.deleted OR \(changed)) THEN
                    INSERT INTO \(movesTable) (version, id, \(scopeColumns.joined(separator: ", ")))
                    VALUES (NEW.version, OLD.id, \(scopeColumns.map { "OLD.\($0)" }.joined(separator: ", ")));
                END IF;
                RETURN NULL;
            END $$
            """)
        statements.append("DROP TRIGGER IF EXISTS \(trigger) ON \(table.sqlTable)")
        statements.append(
            "CREATE TRIGGER \(trigger) AFTER UPDATE ON \(table.sqlTable) FOR EACH ROW EXECUTE FUNCTION \(function)()")
        for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger) }
    }

    /// `c_a IN ($n, …) AND …` for `scope`, its values appended to `binds`.
    private func condition(_ scope: TypedScope, alias: String, binds: inout PostgresBindings) -> String {
        var parts: [String] = []
        for condition in scope.conditions {
            var places: [String] = []
            for value in condition.values {
                PostgresValues.bind(value, into: &binds)
                places.append("$\(binds.count)")
            }
            parts.append("\(alias).\(PostgresTableSQL.quote("c_\(condition.column)")) IN (\(places.joined(separator: ", ")))")
        }
        return parts.joined(separator: " AND ")
    }

    /// The scoped page's two reads (the rows in the scope; the rows a change after `since`
    /// took out of it), each as SQL and binds, in version order, at most `limit`.
    func queries(scope: TypedScope, since: Int64, limit: Int, excludingReplica: String?) -> [PostgresQuery] {
        let list = (["t.id", "t.version", "t.updated_at", "t.deleted"] + table.sqlColumns.map { "t.\($0)" })
            .joined(separator: ", ")
        var current = PostgresBindings()
        let inScope = condition(scope, alias: "t", binds: &current)
        current.append(since)
        var sql = "SELECT \(list) FROM \(table.sqlTable) t WHERE \(inScope) AND t.version > $\(current.count)"
        if let excludingReplica {
            current.append(excludingReplica)
            sql += " AND t.origin <> $\(current.count)"
        }
        current.append(Int64(limit))
        sql += " ORDER BY t.version LIMIT $\(current.count)"

        var old = PostgresBindings()
        let wasInScope = condition(scope, alias: "m", binds: &old)
        old.append(since)
        let sinceIndex = old.count
        var movedSQL =
            "SELECT \(list) FROM \(table.sqlTable) t WHERE t.id IN (SELECT m.id FROM \(movesTable) m WHERE \(wasInScope) "
            + "AND m.version > $\(sinceIndex)) AND t.version > $\(sinceIndex)"
        if let excludingReplica {
            old.append(excludingReplica)
            movedSQL += " AND t.origin <> $\(old.count)"
        }
        old.append(Int64(limit))
        movedSQL += " ORDER BY t.version LIMIT $\(old.count)"
        return [PostgresQuery(unsafeSQL: sql, binds: current), PostgresQuery(unsafeSQL: movedSQL, binds: old)]
    }
}
