/// A TinySync sync response: the request's form plus `saved` and `errors` per entity, and
/// the `last_synced` to send with the next request.
///
/// ```json
/// {"last_synced": "2026-11-25T13:35:39.124Z", "entities": [{"name": "post", …}]}
/// ```
/// `last_synced` is a cursor dressed as a time (see `TinySyncMarkRule` in DallyStore): sent back unchanged it
/// resumes exactly after the rows of this answer.
struct TinySyncAnswer: Encodable {
    let lastSynced: String
    let entities: [TinySyncEntityAnswer]

    enum CodingKeys: String, CodingKey {
        case lastSynced = "last_synced"
        case entities
    }
}
