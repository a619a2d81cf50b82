import DallyCore
import GRDB

/// A query for rows of one table, paged by local sequence.
public struct RowQuery: Sendable {
    public var table: String
    /// Only rows whose latest change came after this local sequence number.
    public var since: Int64
    public var limit: Int
    /// Equality filters, ANDed: (column name, value). Names must be columns of the table.
    public var filters: [(column: String, value: Value)]
    public var includeDeleted: Bool

    public init(
        table: String, since: Int64 = 0, limit: Int, filters: [(column: String, value: Value)] = [],
        includeDeleted: Bool = false
    ) {
        self.table = table
        self.since = since
        self.limit = limit
        self.filters = filters
        self.includeDeleted = includeDeleted
    }
}

/// One page of rows in local-sequence order.
///
/// The cursor is tie-free: every change has its own sequence number, so `nextSince` (the
/// sequence of the last row on the page) resumes exactly after it, however many rows share a
/// timestamp.
public struct Page: Sendable {
    public var rows: [(table: String, row: StoredRow)]
    /// The cursor for the next page: the last row's sequence, or the query's `since` when empty.
    public var nextSince: Int64
    /// Whether more rows follow this page.
    public var more: Bool

    public init(rows: [(table: String, row: StoredRow)], nextSince: Int64, more: Bool) {
        self.rows = rows
        self.nextSince = nextSince
        self.more = more
    }
}

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
