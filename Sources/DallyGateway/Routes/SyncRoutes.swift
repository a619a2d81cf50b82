import DallyCore
import DallyHTTP
import DallyStore
import DallySyncEngine
import Hummingbird

/// `POST /v1/tables/{table}/sync`: sync now. `GET /v1/conflicts`, `POST` and `DELETE
/// /v1/conflicts/{table}/{id}`: list and settle conflicts and rejected changes.
struct SyncRoutes: Sendable {
    let access: TableAccess
    let syncer: (any SyncControl)?

    func register(on router: Router<DallyRequestContext>) {
        router.post("/v1/tables/:table/sync") { request, context in try await syncNow(request, context) }
        router.get("/v1/conflicts") { request, _ in try await list(request) }
        router.post("/v1/conflicts/:table/:id") { request, context in try await resolve(request, context) }
        router.delete("/v1/conflicts/:table/:id") { request, context in try await dismiss(request, context) }
    }

    /// Sends the table's pending changes and pulls it now, whatever its delay but only over the
    /// networks its policy allows (everything else the woken uplink may carry goes along), and
    /// answers 200 with what the cycle did, or 202 when no allowed uplink is available or the
    /// cloud could not be reached: the changes stay queued and go at the first chance.
    func syncNow(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let schema = try access.schema(request, context, write: true)
        _ = try QueryParameters(request, allowed: [])
        guard !schema.policy.localOnly else {
            throw DallyError(.syncDisabled, "table '\(schema.name)' is local_only: it never leaves this gateway")
        }
        guard let syncer else {
            throw DallyError(.syncDisabled, "this gateway has no [cloud] section in its configuration")
        }
        let outcome = await syncer.syncNow(table: schema.name)
        let status: HTTPResponse.Status = if case .synced = outcome { .ok } else { .accepted }
        return try JSONResponse.encoded(SyncNowAnswer(outcome), status: status)
    }

    /// `?table=&all=true&limit=`: open records (all with `all=true`) of the tables the caller
    /// may read, newest first.
    func list(_ request: Request) async throws -> Response {
        let principal = try access.authorizer.principal(of: request)
        guard case .client(let client) = principal else {
            throw DallyError(.forbidden, "the admin token is for /stats and /metrics; use a client token for conflicts")
        }
        let query = try QueryParameters(request, allowed: ["table", "all", "limit"])
        let table = query.string("table")
        if let table {
            guard access.store.schema(table) != nil else {
                throw DallyError(.unknownTable, "no table named '\(table)'", field: "table")
            }
            guard client.mayRead(table) else {
                throw DallyError(.forbidden, "token '\(client.name)' may not read table '\(table)'", field: "table")
            }
            try access.authorizer.requireWholeTable(request, table: table)
        }
        let records = try await access.store.conflicts(
            table: table, includeResolved: try query.bool("all", fallback: false),
            limit: try query.limit(fallback: 100, maximum: 1000))
        // A scoped token sees no conflict of its scoped tables: records hold rows of every scope.
        let listed = records.filter { client.mayRead($0.table) && !access.authorizer.isScoped(request, table: $0.table) }.compactMap { record in
            access.store.schema(record.table).map { ConflictDocument(record, schema: $0) }
        }
        var writer = JSONWriter(capacity: 64 + listed.count * 512)
        writer.raw("{\"conflicts\":[")
        for (index, document) in listed.enumerated() {
            if index > 0 { writer.raw(",") }
            document.write(to: &writer)
        }
        writer.raw("]}")
        return JSONResponse.make(writer)
    }

    /// Body `{"take":"local"}`, `{"take":"server"}` or `{"values":{…}}` (a full row, as PUT).
    func resolve(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let schema = try access.schema(request, context, write: true)
        try access.authorizer.requireWholeTable(request, table: schema.name)
        _ = try QueryParameters(request, allowed: [])
        let id = try Self.rowID(context)
        let body = try await access.jsonBody(request)
        let resolution: ConflictResolution
        switch (body?["take"], body?["values"]) {
        case (.string("local")?, nil): resolution = .takeLocal
        case (.string("server")?, nil): resolution = .takeServer
        case (nil, .some):
            resolution = .write(try RowWrite.decode(body, id: id, kind: .put, schema: schema))
        default:
            throw DallyError(
                .badRequest, "send {\"take\":\"local\"}, {\"take\":\"server\"} or {\"values\":{…}}", field: "take")
        }
        let row = try await access.store.resolveConflict(table: schema.name, id: id, resolution)
        return JSONResponse.row(row, schema: schema)
    }

    func dismiss(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let schema = try access.schema(request, context, write: true)
        try access.authorizer.requireWholeTable(request, table: schema.name)
        _ = try QueryParameters(request, allowed: [])
        try await access.store.dismissConflict(table: schema.name, id: try Self.rowID(context))
        return Response(status: .noContent)
    }

    /// The `{id}` of a conflict's route, refused as the row routes refuse it: no conflict can be
    /// on record for an id no row may have.
    private static func rowID(_ context: DallyRequestContext) throws(DallyError) -> String {
        let id = context.parameters.decoded("id")
        guard Identifier.isValidRowID(id) else { throw DallyError.invalidRowID(id) }
        return id
    }
}
