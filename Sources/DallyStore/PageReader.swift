import DallyCore
import GRDB

enum PageReader {
    static func rows(_ query: RowQuery, table: TableSQL, db: Database) throws -> Page {
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
        arguments.append((query.limit + 1).databaseValue)
        let sql = """
            SELECT \(table.selectList) FROM \(table.sqlTable) WHERE \(conditions.joined(separator: " AND ")) \
            ORDER BY seq LIMIT ?
            """
        let fetched = try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments))
        let more = fetched.count > query.limit
        let rows = fetched.prefix(query.limit).map { (table.schema.name, RowDecoding.storedRow($0, schema: table.schema)) }
        return Page(rows: rows, nextSince: rows.last?.1.seq ?? query.since, more: more)
    }

    static func changes(tables: [TableSQL], since: Int64, limit: Int, db: Database) throws -> Page {
        var merged: [(table: String, row: StoredRow)] = []
        for table in tables {
            let sql = "SELECT \(table.selectList) FROM \(table.sqlTable) WHERE seq > ? ORDER BY seq LIMIT ?"
            for row in try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [since, limit + 1]) {
                merged.append((table.schema.name, RowDecoding.storedRow(row, schema: table.schema)))
            }
        }
        if tables.count > 1 { merged.sort { $0.row.seq < $1.row.seq } }
        let more = merged.count > limit
        let rows = Array(merged.prefix(limit))
        return Page(rows: rows, nextSince: rows.last?.row.seq ?? since, more: more)
    }
}
