/// A page of the changes feed: `{"changes":[…],"since","next_since","more"}`.
struct ChangesPage<Values: Decodable & Sendable>: Decodable {
    let changes: [Row<Values>]
    /// Where the next page starts: past `changes`, and past the rows the page passed over that
    /// the reader may not see (a scoped token's). Absent from gateways before it was sent.
    let nextSince: Int64?

    private enum CodingKeys: String, CodingKey {
        case changes
        case nextSince = "next_since"
    }
}
