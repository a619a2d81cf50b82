import DallyCore

/// What one changes-feed request reads: its tables, the cursor it was asked from, its page
/// size and its filters by table (the `where=` clauses ANDed with the token's scope).
struct FeedRead: Sendable {
    let tables: [String]
    let since: Int64
    let limit: Int
    let filters: [String: RowFilter]

    /// The page cache's key for a read of this from `cursor`: equal reads share one page.
    func cacheKey(cursor: Int64) -> String {
        let filtered = tables.compactMap { table in filters[table].map { "\(table){\($0.key)}" } }
        return "\(tables.joined(separator: ","))|\(cursor)|\(limit)|\(filtered.joined(separator: ";"))|\(since)"
    }
}
