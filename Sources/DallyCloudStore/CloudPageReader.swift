import DallyCore
import DallySync
import DallyStore
import GRDB

/// Reads pages of a cloud table's changes in version order.
enum CloudPageReader {
    /// Rows of `table` with a version after `since`, at most `limit` of them, leaving out those
    /// last written by `excludingReplica`.
    ///
    /// - Parameter tableVersion: the table's version in the reading transaction: the cursor
    ///   when the page holds everything up to now.
    static func page(
        _ table: CloudTableSQL, since: Int64, limit: Int, excludingReplica: String?, tableVersion: Int64, db: Database
    ) throws -> ChangePage {
        let schema = table.schema
        let columns = schema.columns.map(\.name)
        guard limit > 0 else {
            return ChangePage(
                table: schema.name, columns: columns, since: since, version: since, more: since < tableVersion, rows: [])
        }
        let fetched: [Row]
        if let excludingReplica {
            fetched = try Row.fetchAll(
                db.cachedStatement(sql: table.selectForeignChanges), arguments: [since, excludingReplica, limit + 1])
        } else {
            fetched = try Row.fetchAll(db.cachedStatement(sql: table.selectChanges), arguments: [since, limit + 1])
        }
        let more = fetched.count > limit
        var rows: [ChangePage.ChangedRow] = []
        rows.reserveCapacity(min(fetched.count, limit))
        for row in fetched.prefix(limit) {
            let deleted = (row[3] as Int64) != 0
            var values: [JSONValue] = []
            if !deleted {
                values.reserveCapacity(schema.columns.count)
                for (i, column) in schema.columns.enumerated() {
                    values.append(RowDecoding.value(row[4 + i], type: column.type).wireJSON)
                }
            }
            rows.append(
                ChangePage.ChangedRow(id: row[0], version: row[1], updatedAt: row[2], deleted: deleted, values: values))
        }
        let cursor = more ? (rows.last?.version ?? since) : max(since, tableVersion)
        return ChangePage(table: schema.name, columns: columns, since: since, version: cursor, more: more, rows: rows)
    }
}
