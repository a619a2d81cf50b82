import DallyCore
import DallySync
import DallyStore
import GRDB

/// Reads pages of a cloud table's changes in version order.
enum CloudPageReader {
    /// The page a reader at `since` gets: from its cursor, or from version 0 marked `resync`
    /// when the cursor is behind `horizon` or ahead of `tableVersion` (``DownstreamStart``).
    static func page(
        _ table: CloudTableSQL, asked since: Int64, resyncing: Bool, regressed: Bool = false, horizon: Int64, limit: Int,
        excludingReplica: String?, scope: TypedScope? = nil, tableVersion: Int64, db: Database
    ) throws -> ChangePage {
        let start = DownstreamStart(
            since: since, tableVersion: tableVersion, horizon: horizon, resyncing: resyncing, regressed: regressed)
        var page = try page(
            table, since: start.from, limit: limit,
            excludingReplica: start.includesOwnRows(resyncing: resyncing) ? nil : excludingReplica, scope: scope,
            tableVersion: tableVersion, db: db)
        page.resync = start.resync
        return page
    }

    /// The version and horizon of `table` in the reading transaction.
    static func state(of table: String, db: Database) throws -> (version: Int64, horizon: Int64) {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT version, horizon FROM cloud_tables WHERE tbl = ?"), arguments: [table])
        return row.map { ($0[0], $0[1]) } ?? (0, 0)
    }

    /// Rows of `table` with a version after `since`, at most `limit` of them, leaving out those
    /// last written by `excludingReplica`.
    ///
    /// - Parameter tableVersion: the table's version in the reading transaction: the cursor
    ///   when the page holds everything up to now.
    static func page(
        _ table: CloudTableSQL, since: Int64, limit: Int, excludingReplica: String?, scope: TypedScope? = nil,
        tableVersion: Int64, db: Database
    ) throws -> ChangePage {
        let schema = table.schema
        let columns = schema.columns.map(\.name)
        guard limit > 0 else {
            return .bounded(table: schema.name, columns: columns, since: since, limit: 0, tableVersion: tableVersion, fetched: [])
        }
        if let scope {
            guard let scoped = CloudScopeSQL(table) else {
                throw DallyError(.badRequest, "the cloud's table '\(schema.name)' has no scope_columns", field: "scopes")
            }
            let (inScope, movedOut) = try scoped.fetch(
                scope: scope, since: since, limit: limit + 1, excludingReplica: excludingReplica, db: db)
            let rows = ScopedRows.merge(
                inScope: inScope.map { candidate($0, schema: schema, scope: scope) },
                movedOut: movedOut.map { candidate($0, schema: schema, scope: scope) }, fetchLimit: limit + 1)
            return .bounded(
                table: schema.name, columns: columns, since: since, limit: limit, tableVersion: tableVersion, fetched: rows)
        }
        // Decoded as the cursor steps, without copying each row first.
        let cursor =
            if let excludingReplica {
                try Row.fetchCursor(
                    db.cachedStatement(sql: table.selectForeignChanges), arguments: [since, excludingReplica, limit + 1])
            } else {
                try Row.fetchCursor(db.cachedStatement(sql: table.selectChanges), arguments: [since, limit + 1])
            }
        var rows: [ChangePage.ChangedRow] = []
        while let row = try cursor.next() {
            let deleted = (row[3] as Int64) != 0
            var values: [JSONValue] = []
            if !deleted {
                values.reserveCapacity(schema.columns.count)
                for (i, column) in schema.columns.enumerated() {
                    values.append(RowDecoding.value(row[4 + i], type: column.type).wireJSON)
                }
            }
            rows.append(
                ChangePage.ChangedRow(
                    id: row[0], version: row[1], updatedAt: row[2], deleted: deleted, values: values,
                    origin: RowDecoding.optionalText(row, at: 4 + schema.columns.count)))
        }
        return .bounded(
            table: schema.name, columns: columns, since: since, limit: limit, tableVersion: tableVersion, fetched: rows)
    }

    /// A row of a scoped read, and whether its values are in `scope`.
    private static func candidate(_ row: Row, schema: TableSchema, scope: TypedScope) -> ScopedRows.Candidate {
        let deleted = (row[3] as Int64) != 0
        var values: [Value] = []
        if !deleted {
            values.reserveCapacity(schema.columns.count)
            for (i, column) in schema.columns.enumerated() { values.append(RowDecoding.value(row[4 + i], type: column.type)) }
        }
        let inScope = !deleted && scope.matches { name in schema.columnIndex(name).map { values[$0] } }
        return ScopedRows.Candidate(
            row: ChangePage.ChangedRow(
                id: row[0], version: row[1], updatedAt: row[2], deleted: deleted, values: values.map(\.wireJSON)),
            inScope: inScope)
    }
}
