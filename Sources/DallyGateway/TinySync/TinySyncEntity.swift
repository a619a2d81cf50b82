import DallyCore

/// One entity of a TinySync request: the table it names, its sync scope and the client's
/// `created`, `updated` and `deleted` rows, not yet checked against the table.
///
/// ```json
/// {"name": "post", "scope": {"author_id": "5221…"}, "created": [{…}], "updated": [], "deleted": ["521f…"]}
/// ```
struct TinySyncEntity: Sendable {
    let name: String
    /// The scope as sent: equality on columns, null for the whole table.
    let scope: [JSONMember]?
    let created: [JSONValue]
    let updated: [JSONValue]
    let deleted: [JSONValue]
    /// Where it stands in the request, `entities[3]`, for error fields.
    let path: String

    var rowCount: Int { created.count + updated.count + deleted.count }

    /// - Throws: ``DallyError`` `bad_request` naming the member at fault.
    init(json: JSONValue, path: String) throws(DallyError) {
        guard case .object(let members) = json else {
            throw DallyError(.badRequest, "an entity must be an object with a name", field: path)
        }
        var name: String?
        var scope: [JSONMember]?
        var lists: [String: [JSONValue]] = [:]
        for member in members {
            let field = "\(path).\(member.key)"
            switch (member.key, member.value) {
            case ("name", .string(let text)): name = text
            case ("scope", .object(let conditions)): scope = conditions
            case ("scope", .null): scope = nil
            case ("created", .array(let rows)), ("updated", .array(let rows)), ("deleted", .array(let rows)):
                lists[member.key] = rows
            case ("created", .null), ("updated", .null), ("deleted", .null):
                lists[member.key] = []
            // Answers carry these; a client that echoes an answer's entity back is not refused.
            case ("saved", _), ("errors", _):
                break
            case ("name", _):
                throw DallyError(.badRequest, "name must be a string naming a table", field: field)
            case ("scope", _):
                throw DallyError(
                    .badRequest, "scope must be an object of column: value conditions, or null", field: field)
            case ("created", _), ("updated", _), ("deleted", _):
                throw DallyError(.badRequest, "\(member.key) must be an array", field: field)
            default:
                throw DallyError(
                    .badRequest,
                    "unknown member '\(member.key)'; an entity has name, scope, created, updated and deleted",
                    field: field)
            }
        }
        guard let name else { throw DallyError(.badRequest, "every entity needs a name", field: "\(path).name") }
        self.name = name
        self.scope = scope
        created = lists["created"] ?? []
        updated = lists["updated"] ?? []
        deleted = lists["deleted"] ?? []
        self.path = path
    }
}
