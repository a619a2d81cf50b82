/// One entry of a batch: `{"id","values","updated_at","expected_seq"}`, optional members left out.
struct BatchEntry: Encodable, Sendable {
    let id: String
    let values: EncodableBox?
    let updatedAt: Int64?
    let expectedSeq: Int64?

    enum CodingKeys: String, CodingKey {
        case id, values
        case updatedAt = "updated_at"
        case expectedSeq = "expected_seq"
    }
}
