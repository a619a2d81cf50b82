/// One page of rows: the rows, and the cursor to ask for the next page from.
///
/// For example: `for try await page in orders.pages() { cursor = page.nextSince }`.
public struct Page<Values: Decodable & Sendable>: Decodable, Sendable {
    /// The page's rows, in `seq` order.
    public let rows: [Row<Values>]
    /// The cursor this page was asked from.
    public let since: Int64
    /// The cursor for the next page (the last row's `seq`).
    public let nextSince: Int64
    /// Whether rows remain past this page.
    public let more: Bool

    private enum CodingKeys: String, CodingKey {
        case rows, since, more
        case nextSince = "next_since"
    }
}
