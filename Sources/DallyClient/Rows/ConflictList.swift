/// `{"conflicts":[…]}`.
struct ConflictList: Decodable {
    let conflicts: [Conflict]
}
