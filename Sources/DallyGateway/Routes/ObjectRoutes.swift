import DallyCore
import DallyHTTP
import DallyObjects
import DallyStore
import DallySyncEngine
import Hummingbird

/// `PUT`, `GET` and `HEAD` on `/v1/tables/{table}/rows/{id}/objects/{column}`: a row's
/// object, uploaded and read as raw bytes.
///
/// Nothing from the path names a file: the table and column must be configured names, the id
/// is a validated row id, and the bytes are found by the content hash the row stores.
struct ObjectRoutes: Sendable {
    let access: TableAccess
    let receiver: ObjectReceiver
    let chunks: any ChunkStore
    let fetcher: (any ObjectFetching)?

    func register(on router: Router<DallyRequestContext>) {
        let path = RouterPath("/v1/tables/:table/rows/:id/objects/:column")
        router.put(path) { request, context in try await upload(request, context) }
        router.get(path) { request, context in try await read(request, context, head: false) }
        router.head(path) { request, context in try await read(request, context, head: true) }
    }

    /// Streams the body into the chunk store, then records the object and sets the column in
    /// one transaction: the row is patched (other columns kept) or created (others null).
    func upload(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let (schema, id, column, _) = try target(request, context, write: true)
        let query = try QueryParameters(request, allowed: ["expected_seq"])
        var bodySeq: Int64?
        if let text = query.string("expected_seq") {
            guard let seq = Int64(text), seq >= 0 else {
                throw DallyError(.badQuery, "'expected_seq' must be an integer ≥ 0", field: "expected_seq")
            }
            bodySeq = seq
        }
        let precondition = try RowRoutes.precondition(request, body: bodySeq)
        let scope = try access.authorizer.scope(of: request, table: schema.name)
        do {
            let outcome = try await receiver.receive(request) { manifest in
                try await access.store.writeObject(
                    manifest, table: schema.name, id: id, column: column, expectedSeq: precondition.expectedSeq,
                    requiresExisting: precondition.requiresExisting, clientScope: scope)
            }
            var response = JSONResponse.row(outcome.row, schema: schema)
            if outcome.created { response.status = .created }
            return response
        } catch let error as DallyError where error.current != nil {
            return JSONResponse.error(error, schema: schema)
        }
    }

    /// Serves the object the row's column references, fetching it from the cloud first when
    /// it is not here and a fetcher is configured.
    func read(_ request: Request, _ context: DallyRequestContext, head: Bool) async throws -> Response {
        let (schema, id, column, index) = try target(request, context, write: false)
        _ = try QueryParameters(request, allowed: [])
        guard let row = try await access.visibleRow(request, schema: schema, id: id) else {
            throw DallyError(.notFound, "no row '\(id)' in '\(schema.name)'", field: "id")
        }
        guard let reference = Self.reference(row.values[index]) else {
            throw DallyError(.notFound, "row '\(id)' has no object in column '\(column)'", field: "column")
        }
        let manifest = try await servable(reference, table: schema.name)
        return ObjectResponse.make(manifest, request: request, chunks: chunks, head: head)
    }

    /// Who may do what to which row's column, checked before a byte of the body is read.
    private func target(
        _ request: Request, _ context: DallyRequestContext, write: Bool
    ) throws(DallyError) -> (schema: TableSchema, id: String, column: String, index: Int) {
        let schema = try access.schema(request, context, write: write)
        let id = context.parameters.decoded("id")
        guard Identifier.isValidRowID(id) else { throw DallyError.invalidRowID(id) }
        let column = context.parameters.decoded("column")
        let index = try ReplicaStore.objectColumn(column, of: schema)
        return (schema, id, column, index)
    }

    private func servable(_ reference: ObjectReference, table: String) async throws -> ObjectManifest {
        if let manifest = try await access.store.object(reference.hash)?.servable { return manifest }
        guard let fetcher else {
            throw DallyError(
                .objectUnavailable,
                "object \(reference.hash.hex) is not on this gateway, and the gateway has no cloud to fetch it from")
        }
        try await fetcher.fetch(reference, table: table)
        guard let manifest = try await access.store.object(reference.hash)?.servable else {
            throw DallyError(.objectUnavailable, "object \(reference.hash.hex) could not be fetched to this gateway")
        }
        return manifest
    }

    /// The reference an `OBJECT` column's value holds; nil for null.
    static func reference(_ value: Value) -> ObjectReference? {
        switch value {
        case .json(let text), .text(let text): ObjectReference(jsonText: text)
        default: nil
        }
    }
}
