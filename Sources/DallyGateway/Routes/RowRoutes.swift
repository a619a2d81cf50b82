import DallyHTTP
import DallyCore
import DallyStore
import Foundation
import Hummingbird

/// `PUT`, `PATCH`, `DELETE` and `GET` on `/v1/tables/{table}/rows/{id}`.
struct RowRoutes: Sendable {
    let access: TableAccess

    func register(on router: Router<DallyRequestContext>) {
        let path = "/v1/tables/:table/rows/:id"
        router.put(RouterPath(path)) { request, context in try await write(request, context, kind: .put) }
        router.patch(RouterPath(path)) { request, context in try await write(request, context, kind: .patch) }
        router.delete(RouterPath(path)) { request, context in try await write(request, context, kind: .delete) }
        router.get(RouterPath(path)) { request, context in try await read(request, context) }
    }

    func write(_ request: Request, _ context: DallyRequestContext, kind: RowWrite.Kind) async throws -> Response {
        let schema = try access.schema(request, context, write: true)
        // None taken: `?expected_seq=0` must not pass for a create-only write that it is not
        // (the precondition goes in the body or in `If-Match` / `If-None-Match`).
        _ = try QueryParameters(request, allowed: [])
        let id = context.parameters.decoded("id")
        let body = try await access.jsonBody(request)
        let decoded = try RowWrite.decode(body, id: id, kind: kind, schema: schema)
        let precondition = try Self.precondition(request, body: decoded.expectedSeq)
        var write = RowWrite(
            id: decoded.id, kind: decoded.kind, values: decoded.values, updatedAt: decoded.updatedAt,
            expectedSeq: precondition.expectedSeq)
        write.requiresExisting = precondition.requiresExisting
        write.clientScope = try access.authorizer.scope(of: request, table: schema.name)
        do {
            let row = try await access.store.write(write, table: schema.name)
            return JSONResponse.row(row, schema: schema)
        } catch let error as DallyError {
            return JSONResponse.error(error, schema: schema)
        }
    }

    func read(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let schema = try access.schema(request, context, write: false)
        _ = try QueryParameters(request, allowed: [])
        let id = context.parameters.decoded("id")
        guard Identifier.isValidRowID(id) else { throw DallyError.invalidRowID(id) }
        guard let row = try await access.visibleRow(request, schema: schema, id: id) else {
            throw DallyError(.notFound, "no row '\(id)' in '\(schema.name)'", field: "id")
        }
        // A client's HTTP cache asks again with the tag it holds: unchanged, no body.
        let tag = JSONResponse.rowTag(row)
        if let ifNoneMatch = request.headers[.ifNoneMatch], EntityTag.isListed(tag, in: ifNoneMatch) {
            return Response(status: .notModified, headers: [.eTag: tag])
        }
        return JSONResponse.row(row, schema: schema)
    }

    /// A write's precondition: the expected sequence from `If-Match: "<seq>"`, `If-None-Match: *`
    /// (create only, 0) or the body's `expected_seq`, which must agree when more than one is
    /// given; or `If-Match: *`, the row must exist (RFC 9110: any current representation).
    static func precondition(_ request: Request, body: Int64?) throws(DallyError) -> (expectedSeq: Int64?, requiresExisting: Bool) {
        var header: Int64?
        var requiresExisting = false
        if let ifMatch = request.headers[.ifMatch] {
            let trimmed = ifMatch.trimmingCharacters(in: ["\"", " "])
            if ifMatch.trimmingCharacters(in: .whitespaces) == "*" {
                requiresExisting = true
            } else if let seq = Int64(trimmed), seq > 0 {
                header = seq
            } else {
                throw DallyError(.badRequest, "If-Match must be a row's ETag, e.g. \"17\", or *", field: "If-Match")
            }
        }
        if let ifNoneMatch = request.headers[.ifNoneMatch] {
            guard ifNoneMatch == "*", header == nil, !requiresExisting else {
                throw DallyError(.badRequest, "If-None-Match takes only *, and not with If-Match", field: "If-None-Match")
            }
            header = 0
        }
        if let header, let body, header != body {
            throw DallyError(.badRequest, "the precondition header and expected_seq disagree", field: "expected_seq")
        }
        if requiresExisting, body == 0 {
            throw DallyError(.badRequest, "If-Match: * (the row must exist) and expected_seq 0 (it must not) disagree", field: "expected_seq")
        }
        return (header ?? body, requiresExisting)
    }
}
