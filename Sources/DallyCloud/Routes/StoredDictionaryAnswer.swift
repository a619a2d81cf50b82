/// `PUT /v1/dictionaries/{id}`'s answer: `{"id","table","bytes"}`.
struct StoredDictionaryAnswer: Encodable {
    let id: UInt32
    let table: String
    let bytes: Int
}
