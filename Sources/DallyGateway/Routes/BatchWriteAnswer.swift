import DallyCore

/// `POST /v1/tables/{t}/batch`'s answer: `{"saved":[ids],"errors":[{"id","code","field","message"}],"seq"}`.
struct BatchWriteAnswer: Encodable {
    /// One row refused: its id (null when the entry had none), why, and the offending field.
    struct Refusal: Encodable {
        let id: String?
        let code: String
        let field: String?
        let message: String

        func encode(to encoder: any Encoder) throws {
            var object = encoder.container(keyedBy: CodingName.self)
            try object.encode(id, for: "id")
            try object.encode(code, for: "code")
            try object.encode(field, for: "field")
            try object.encode(message, for: "message")
        }
    }

    let saved: [String]
    let errors: [Refusal]
    let seq: Int64
}
