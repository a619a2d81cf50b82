import DallyHTTP
import DallyCore
import DallyStore
import Hummingbird

/// `POST /v1/tables/{table}/batch`: many row writes in one transaction, answered per row in
/// TinySync's shape.
///
/// ```json
/// {"created": [{"id": "a", "values": {…}}], "updated": [{"id": "b", "values": {…}}],
///  "deleted": ["c", {"id": "d", "expected_seq": 9}], "all_or_nothing": false}
/// ```
/// `created` entries are full writes (PUT: created or replaced), `updated` entries partial
/// (PATCH: the row must exist), `deleted` entries tombstones. The answer is
/// `{"saved": [ids], "errors": [{"id", "code", "field", "message"}], "seq": n}`. A refused row
/// never stops the others, unless `all_or_nothing` is set: then one refusal saves nothing.
struct BatchRoute: Sendable {
    let access: TableAccess
    let maxRows: Int

    func register(on router: Router<DallyRequestContext>) {
        router.post("/v1/tables/:table/batch") { request, context in try await handle(request, context) }
    }

    func handle(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let schema = try access.schema(request, context, write: true)
        _ = try QueryParameters(request, allowed: [])
        guard case .object(let members)? = try await access.jsonBody(request) else {
            throw DallyError(.badRequest, "the body must be an object with created, updated and/or deleted arrays")
        }
        var sections: [(RowWrite.Kind, [JSONValue])] = []
        var allOrNothing = false
        for member in members {
            switch (member.key, member.value) {
            case ("created", .array(let rows)): sections.append((.put, rows))
            case ("updated", .array(let rows)): sections.append((.patch, rows))
            case ("deleted", .array(let rows)): sections.append((.delete, rows))
            case ("all_or_nothing", .bool(let flag)): allOrNothing = flag
            case ("created", _), ("updated", _), ("deleted", _), ("all_or_nothing", _):
                throw DallyError(.badRequest, "'\(member.key)' has the wrong type", field: member.key)
            default:
                throw DallyError(
                    .badRequest, "unknown member '\(member.key)'; a batch has created, updated, deleted, all_or_nothing",
                    field: member.key)
            }
        }
        let total = sections.reduce(0) { $0 + $1.1.count }
        guard total <= maxRows else {
            throw DallyError(.tooManyRows, "a batch holds at most \(maxRows) rows (limits.max_rows_per_batch); got \(total)")
        }

        let scope = try access.authorizer.scope(of: request, table: schema.name)
        var writes: [RowWrite] = []
        writes.reserveCapacity(total)
        var refused: [(id: String?, error: DallyError)] = []
        for (kind, rows) in sections {
            for entry in rows {
                do throws(DallyError) {
                    var write = try Self.decode(entry, kind: kind, schema: schema)
                    write.clientScope = scope
                    writes.append(write)
                } catch {
                    refused.append((Self.entryID(entry), error))
                }
            }
        }

        var outcome = BatchOutcome()
        if refused.isEmpty || !allOrNothing {
            outcome = try await access.store.writeBatch(writes, table: schema.name, allOrNothing: allOrNothing)
        }
        return try JSONResponse.encoded(Self.answer(outcome, refusedEarly: refused))
    }

    static func decode(_ entry: JSONValue, kind: RowWrite.Kind, schema: TableSchema) throws(DallyError) -> RowWrite {
        switch entry {
        case .string(let id) where kind == .delete:
            return try RowWrite.decode(nil, id: id, kind: .delete, schema: schema)
        case .object:
            guard case .string(let id)? = entry["id"] else {
                throw DallyError(.invalidID, "every batch entry needs a string \"id\"", field: "id")
            }
            return try RowWrite.decode(entry, id: id, kind: kind, schema: schema)
        default:
            throw DallyError(.badRequest, "a batch entry must be an object\(kind == .delete ? " or an id" : "")")
        }
    }

    static func entryID(_ entry: JSONValue) -> String? {
        if case .string(let id) = entry { return id }
        if case .string(let id)? = entry["id"] { return id }
        return nil
    }

    static func answer(_ outcome: BatchOutcome, refusedEarly: [(id: String?, error: DallyError)]) -> BatchWriteAnswer {
        let errors = refusedEarly + outcome.errors.map { (id: Optional($0.id), error: $0.error) }
        return BatchWriteAnswer(
            saved: outcome.saved,
            errors: errors.map { .init(id: $0.id, code: $0.error.code.rawValue, field: $0.error.field, message: $0.error.message) },
            seq: outcome.lastSeq)
    }
}
