import DallyCore

/// A TinySync sync request, as TinySync's documentation shows it:
///
/// ```json
/// {"last_synced": "2014-02-14T09:12:43-0700",
///  "entities": [{"name": "post", "scope": {"author_id": "52212589594cc44541000016"},
///                "created": [{"id": "521fa720594cc48c1d000003", "updated_at": "…", "body": "…"}],
///                "updated": […], "deleted": ["521fa720594cc48c1d000016"]}]}
/// ```
///
/// Only the envelope is checked here; rows are checked against their table by
/// ``TinySyncEntityPlan``. Read from the parsed ``JSONValue`` rather than through `Decodable`:
/// the parser already gives byte offsets for broken JSON, and every complaint here names the
/// exact place, such as `entities[0].created[2]`.
struct TinySyncRequest: Sendable {
    /// The client's `last_synced` in milliseconds since 1970; nil (absent or null) asks for
    /// everything in each entity's scope.
    let lastSynced: Int64?
    let entities: [TinySyncEntity]

    /// - Throws: ``DallyError`` `bad_request` naming the member at fault.
    init(json: JSONValue?) throws(DallyError) {
        guard case .object(let members)? = json else {
            throw DallyError(
                .badRequest, "the body must be a TinySync sync request: {\"last_synced\": …, \"entities\": [ … ]}")
        }
        var lastSynced: Int64?
        var entities: [TinySyncEntity]?
        for member in members {
            switch member.key {
            case "last_synced":
                switch member.value {
                case .null: lastSynced = nil
                case .string(let text):
                    guard let time = TinySyncTime.parse(text) else {
                        throw DallyError(
                            .badRequest, "last_synced must be an ISO 8601 time such as 2014-02-14T09:12:43-0700, or null",
                            field: "last_synced")
                    }
                    lastSynced = time
                default:
                    throw DallyError(.badRequest, "last_synced must be an ISO 8601 string or null", field: "last_synced")
                }
            case "entities":
                guard case .array(let list) = member.value else {
                    throw DallyError(.badRequest, "entities must be an array of entity objects", field: "entities")
                }
                var decoded: [TinySyncEntity] = []
                for (index, entity) in list.enumerated() {
                    decoded.append(try TinySyncEntity(json: entity, path: "entities[\(index)]"))
                }
                entities = decoded
            default:
                throw DallyError(
                    .badRequest, "unknown member '\(member.key)'; a sync request has last_synced and entities",
                    field: member.key)
            }
        }
        guard let entities else {
            throw DallyError(.badRequest, "entities is required (an array, possibly empty)", field: "entities")
        }
        var names: Set<String> = []
        for entity in entities where !names.insert(entity.name).inserted {
            throw DallyError(.badRequest, "entity '\(entity.name)' is given twice", field: "\(entity.path).name")
        }
        self.lastSynced = lastSynced
        self.entities = entities
    }
}
