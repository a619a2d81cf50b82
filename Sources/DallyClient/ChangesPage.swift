/// A page of the changes feed: `{"changes":[…],"since","next_since","more"}`.
struct ChangesPage<Values: Decodable & Sendable>: Decodable {
    let changes: [Row<Values>]
}
