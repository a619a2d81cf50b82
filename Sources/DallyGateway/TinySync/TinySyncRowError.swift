import DallyCore

/// One refused row in a TinySync answer's `errors`, in TinySync's shape plus Dally's code:
///
/// ```json
/// {"id": "521fa720594cc48c1d000013", "field": "body", "message": "…", "code": "wrong_type"}
/// ```
/// `field` is the column at fault, null when the fault is the row's, not a field's.
struct TinySyncRowError: Encodable {
    let id: String
    let error: DallyError

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(id, for: "id")
        try object.encode(error.field, for: "field")
        try object.encode(error.message, for: "message")
        try object.encode(error.code.rawValue, for: "code")
    }
}
