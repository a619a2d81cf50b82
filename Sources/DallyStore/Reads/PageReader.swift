import DallyCore
import GRDB

enum PageReader {
    /// - Parameter shapes: the statements `where=` filters shape, cached within a bound.
    static func rows(_ query: RowQuery, table: TableSQL, shapes: StatementShapes, db: Database) throws -> Page {
        var conditions = ["seq > ?"]
        var arguments: [DatabaseValue] = [query.since.databaseValue]
        if !query.includeDeleted { conditions.append("deleted = 0") }
        for filter in query.filters {
            guard let column = table.sqlColumn(named: filter.column) else {
                throw DallyError(.badQuery, "table '\(table.schema.name)' has no column '\(filter.column)'", field: "where")
            }
            if filter.value == .null {
                conditions.append("\(column) IS NULL")
            } else {
                conditions.append("\(column) = ?")
                arguments.append(RowDecoding.databaseValue(filter.value))
            }
        }
        if !query.scope.isEmpty {
            conditions.append(try FilterSQL.current(query.scope, table: table, alias: "", arguments: &arguments))
        }
        arguments.append((query.limit + 1).databaseValue)
        let sql = """
            SELECT \(table.selectList) FROM \(table.sqlTable) WHERE \(conditions.joined(separator: " AND ")) \
            ORDER BY seq LIMIT ?
            """
        let statement = try query.filters.isEmpty ? db.cachedStatement(sql: sql) : shapes.statement(sql, db: db)
        let fetched = try RowDecoding.storedRows(statement, arguments: StatementArguments(arguments), schema: table.schema)
        let rows = fetched.prefix(query.limit).map { (table.schema.name, $0) }
        return Page(rows: rows, nextSince: rows.last?.1.seq ?? query.since, more: fetched.count > query.limit)
    }

    /// Changes of `tables` after `since`, merged in sequence order. A table with a filter in
    /// `filters` gives only its rows that pass it now, and, marked in ``Page/left``, its live
    /// rows that passed it at `since` and no longer do; its tombstones only when the row passed
    /// at `since`. Filtered, an incomplete page's cursor is the tables' latest sequence, so
    /// that the reader never reads the rows it skipped again.
    static func changes(
        tables: [TableSQL], since: Int64, limit: Int, filters: [String: RowFilter] = [:], shapes: StatementShapes,
        db: Database
    ) throws -> Page {
        var merged: [(table: String, row: StoredRow)] = []
        var left: Set<Int64> = []
        var latest = since
        for table in tables {
            let filter = filters[table.schema.name] ?? .all
            if filter.isEmpty {
                let sql = "SELECT \(table.selectList) FROM \(table.sqlTable) WHERE seq > ? ORDER BY seq LIMIT ?"
                let fetched = try RowDecoding.storedRows(
                    db.cachedStatement(sql: sql), arguments: [since, limit + 1], schema: table.schema)
                merged += fetched.map { (table.schema.name, $0) }
            } else {
                var arguments: [DatabaseValue] = [since.databaseValue]
                let now = try FilterSQL.current(filter, table: table, alias: "t", arguments: &arguments)
                let then = MoveLog.matchedAt(filter, table: table, alias: "t", arguments: &arguments, since: since)
                arguments.append((limit + 1).databaseValue)
                let sql = """
                    SELECT \(table.selectList(qualifiedBy: "t")) FROM \(table.sqlTable) t \
                    WHERE t.seq > ? AND ((\(now)) OR \(then)) ORDER BY t.seq LIMIT ?
                    """
                let cursor = try Row.fetchCursor(shapes.statement(sql, db: db), arguments: StatementArguments(arguments))
                while let fetched = try cursor.next() {
                    let row = RowDecoding.storedRow(fetched, schema: table.schema)
                    let schema = table.schema
                    if !row.deleted, !filter.matches({ schema.columnIndex($0).map { row.values[$0] } }) {
                        left.insert(row.seq)
                    }
                    merged.append((schema.name, row))
                }
            }
        }
        let filtered = filters.values.contains { !$0.isEmpty }
        if filtered {
            for table in tables {
                let top = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(seq) FROM \(table.sqlTable)")) ?? since
                latest = max(latest, top)
            }
        }
        if tables.count > 1 { merged.sort { $0.row.seq < $1.row.seq } }
        let more = merged.count > limit
        let rows = Array(merged.prefix(limit))
        let nextSince = more || !filtered ? (rows.last?.row.seq ?? since) : latest
        var page = Page(rows: rows, nextSince: nextSince, more: more)
        page.left = left.intersection(rows.map(\.row.seq))
        return page
    }
}
