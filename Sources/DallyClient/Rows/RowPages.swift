/// The pages of a table, fetched one at a time as the sequence is iterated, until the gateway
/// says there are no more. Made by ``Table/pages(since:matching:pageSize:includeDeleted:)``.
///
/// For example:
/// ```swift
/// var total = 0.0
/// for try await page in orders.pages(matching: ["paid": "false"]) {
///     total += page.rows.compactMap { $0.values?.total }.reduce(0, +)
/// }
/// ```
public struct RowPages<Values: Codable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = Page<Values>
    public typealias Failure = any Error

    let table: Table<Values>
    let since: Int64
    let pageSize: Int?
    let filters: [(String, String)]

    public func makeAsyncIterator() -> Iterator {
        Iterator(pages: self, since: since, done: false)
    }

    /// Fetches the next page when asked; nil once the gateway said no more.
    public struct Iterator: AsyncIteratorProtocol {
        let pages: RowPages
        var since: Int64
        var done: Bool

        public mutating func next() async throws -> Page<Values>? {
            guard !done else { return nil }
            let query = [("since", String(since))] + (pages.pageSize.map { [("limit", String($0))] } ?? []) + pages.filters
            let page = try await pages.table.client.call(
                "GET", Endpoint(segments: ["v1", "tables", pages.table.name, "rows"], query: query),
                as: Page<Values>.self)
            since = page.nextSince
            done = !page.more
            return page
        }
    }
}
