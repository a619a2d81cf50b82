import DallyCore

/// One entity of a TinySync answer: the request's entity (`name`, `scope` as sent) with the
/// rows changed on the gateway since the client's `last_synced` within the scope, and what
/// became of the rows the client sent.
///
/// ```json
/// {"name": "post", "scope": {"author_id": "5221…"}, "created": [{…}], "updated": [{…}],
///  "deleted": ["521f…"], "saved": ["521f…"], "errors": [{"id", "field", "message", "code"}]}
/// ```
/// `created` holds the live rows when the answer starts from the beginning (no `last_synced`,
/// or one older than every mark: the client can hold none of them), `updated` otherwise: the
/// replica keeps no creation time, and TinySync's Android client adds both lists to its store
/// alike. `deleted` holds the ids of rows deleted since.
struct TinySyncEntityAnswer: Encodable {
    let name: String
    let scope: [JSONMember]?
    let created: [TinySyncRecord]
    let updated: [TinySyncRecord]
    let deleted: [String]
    let saved: [String]
    let errors: [TinySyncRowError]

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(name, for: "name")
        try object.encode(scope.map(JSONValue.object), for: "scope")
        try object.encode(created, for: "created")
        try object.encode(updated, for: "updated")
        try object.encode(deleted, for: "deleted")
        try object.encode(saved, for: "saved")
        try object.encode(errors, for: "errors")
    }
}
