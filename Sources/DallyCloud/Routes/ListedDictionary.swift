/// One entry of `GET /v1/dictionaries`: `{"id","table","created_at"}`.
struct ListedDictionary: Encodable {
    let id: UInt32
    let table: String
    let createdAt: Int64

    enum CodingKeys: String, CodingKey {
        case id, table
        case createdAt = "created_at"
    }
}
