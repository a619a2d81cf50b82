/// The body of a row write: `{"values":…,"updated_at":…,"expected_seq":…}`, the optional
/// members left out when nil.
struct RowWriteBody<Values: Encodable>: Encodable {
    let values: Values
    let updatedAt: Int64?
    let expectedSeq: Int64?

    enum CodingKeys: String, CodingKey {
        case values
        case updatedAt = "updated_at"
        case expectedSeq = "expected_seq"
    }
}
