extension ChangePage {
    /// A page from rows read in version order with a limit of `limit + 1`: the extra row only
    /// tells whether there is more.
    ///
    /// The cursor is the last row's version when there is more, else the table's version when
    /// the page was read (`tableVersion`), or the last row's if a later commit is already in the
    /// rows: a store assigns versions in commit order, so every version below a row it shows
    /// has committed.
    public static func bounded(
        table: String, columns: [String], since: Int64, limit: Int, tableVersion: Int64, fetched: [ChangedRow]
    ) -> ChangePage {
        guard limit > 0 else {
            return ChangePage(table: table, columns: columns, since: since, version: since, more: since < tableVersion, rows: [])
        }
        let more = fetched.count > limit
        let rows = Array(fetched.prefix(limit))
        let cursor = more ? (rows.last?.version ?? since) : max(since, tableVersion, rows.last?.version ?? since)
        return ChangePage(table: table, columns: columns, since: since, version: cursor, more: more, rows: rows)
    }
}
