import DallyCore
import DallySync
import Logging
import PostgresNIO

/// Reads pages of a cloud table's changes in version order from PostgreSQL.
///
/// The table's version is read before its rows, in separate statements: batches assign
/// versions under the table's counter lock and commit them in order, so every row up to the
/// version read is visible to the rows' statement, and a row past it only moves the cursor
/// further (``ChangePage/bounded(table:columns:since:limit:tableVersion:fetched:)``). A reader
/// paging `since = v` therefore never skips a change that commits later with a smaller version.
enum PostgresPageReader {
    static func page(
        _ table: PostgresTableSQL, since: Int64, limit: Int, excludingReplica: String?, scope: TypedScope? = nil,
        tableVersion: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> ChangePage {
        let schema = table.schema
        let columns = schema.columns.map(\.name)
        guard limit > 0, since < tableVersion else {
            return .bounded(
                table: schema.name, columns: columns, since: since, limit: limit, tableVersion: tableVersion, fetched: [])
        }
        if let scope {
            guard let scoped = PostgresScopeSQL(table) else {
                throw DallyError(.badRequest, "the cloud's table '\(schema.name)' has no scope_columns", field: "scopes")
            }
            var reads: [[ScopedRows.Candidate]] = []
            for query in scoped.queries(scope: scope, since: since, limit: limit + 1, excludingReplica: excludingReplica) {
                var candidates: [ScopedRows.Candidate] = []
                for try await row in try await connection.query(query, logger: logger) {
                    candidates.append(try candidate(row.makeRandomAccess(), schema: schema, scope: scope))
                }
                reads.append(candidates)
            }
            let rows = ScopedRows.merge(inScope: reads[0], movedOut: reads[1], fetchLimit: limit + 1)
            return .bounded(
                table: schema.name, columns: columns, since: since, limit: limit, tableVersion: tableVersion, fetched: rows)
        }
        var binds = PostgresBindings()
        binds.append(since)
        if let excludingReplica { binds.append(excludingReplica) }
        binds.append(Int64(limit + 1))
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: table.selectChanges(foreign: excludingReplica != nil), binds: binds), logger: logger)
        var fetched: [ChangePage.ChangedRow] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            let deleted = try cells[3].decode(Bool.self)
            var values: [JSONValue] = []
            if !deleted {
                values.reserveCapacity(schema.columns.count)
                for (i, column) in schema.columns.enumerated() {
                    values.append(try PostgresValues.value(cells[4 + i], type: column.type).wireJSON)
                }
            }
            fetched.append(
                ChangePage.ChangedRow(
                    id: try cells[0].decode(String.self), version: try cells[1].decode(Int64.self),
                    updatedAt: try cells[2].decode(Int64.self), deleted: deleted, values: values,
                    origin: try cells[4 + schema.columns.count].decode(String.self)))
        }
        return .bounded(
            table: schema.name, columns: columns, since: since, limit: limit, tableVersion: tableVersion, fetched: fetched)
    }

    /// The page a reader at `since` gets: from its cursor, or from version 0 marked `resync`
    /// (``DownstreamStart``).
    static func page(
        _ table: PostgresTableSQL, asked since: Int64, resyncing: Bool, regressed: Bool = false, horizon: Int64,
        limit: Int, excludingReplica: String?, scope: TypedScope? = nil, tableVersion: Int64,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> ChangePage {
        let start = DownstreamStart(
            since: since, tableVersion: tableVersion, horizon: horizon, resyncing: resyncing, regressed: regressed)
        var page = try await page(
            table, since: start.from, limit: limit,
            excludingReplica: start.includesOwnRows(resyncing: resyncing) ? nil : excludingReplica, scope: scope,
            tableVersion: tableVersion, on: connection, logger: logger)
        page.resync = start.resync
        return page
    }

    /// The horizons of `tables`.
    static func horizons(_ tables: [String], on connection: PostgresConnection, logger: Logger) async throws
        -> [String: Int64]
    {
        var binds = PostgresBindings()
        binds.append(tables)
        var horizons: [String: Int64] = [:]
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT tbl, horizon FROM cloud_tables WHERE tbl = ANY($1)", binds: binds),
            logger: logger)
        for try await (table, horizon) in rows.decode((String, Int64).self) { horizons[table] = horizon }
        return horizons
    }

    /// A row of a scoped read, and whether its values are in `scope`.
    private static func candidate(_ cells: PostgresRandomAccessRow, schema: TableSchema, scope: TypedScope) throws
        -> ScopedRows.Candidate
    {
        let deleted = try cells[3].decode(Bool.self)
        var values: [Value] = []
        if !deleted {
            values.reserveCapacity(schema.columns.count)
            for (i, column) in schema.columns.enumerated() {
                values.append(try PostgresValues.value(cells[4 + i], type: column.type))
            }
        }
        let inScope = !deleted && scope.matches { name in schema.columnIndex(name).map { values[$0] } }
        return ScopedRows.Candidate(
            row: ChangePage.ChangedRow(
                id: try cells[0].decode(String.self), version: try cells[1].decode(Int64.self),
                updatedAt: try cells[2].decode(Int64.self), deleted: deleted, values: values.map(\.wireJSON)),
            inScope: inScope)
    }

    /// The committed versions of `tables` (all of them when nil).
    static func versions(_ tables: [String]?, on connection: PostgresConnection, logger: Logger) async throws
        -> [String: Int64]
    {
        var versions: [String: Int64] = [:]
        let rows: PostgresRowSequence
        if let tables {
            var binds = PostgresBindings()
            binds.append(tables)
            rows = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT tbl, version FROM cloud_tables WHERE tbl = ANY($1)", binds: binds),
                logger: logger)
        } else {
            rows = try await connection.query("SELECT tbl, version FROM cloud_tables", logger: logger)
        }
        for try await (table, version) in rows.decode((String, Int64).self) { versions[table] = version }
        return versions
    }
}
