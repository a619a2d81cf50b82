import DallyCompression
import DallyCore
import DallyHTTP
import DallyStore
import Hummingbird

/// What every table route needs: the store, the authorizer and the limits; and the steps
/// every table route takes first (who is calling, which table, may they).
struct TableAccess: Sendable {
    let store: ReplicaStore
    let authorizer: Authorizer
    let maxBodyBytes: Int

    /// Authenticates the caller, resolves `{table}` against the configuration and checks the
    /// caller's right on it — in that order, so an unknown token is 401 before anything else.
    func schema(_ request: Request, _ context: some RequestContext, write: Bool) throws(DallyError) -> TableSchema {
        _ = try authorizer.principal(of: request)
        let name = context.parameters.decoded("table")
        guard let schema = store.schema(name) else {
            throw DallyError(.unknownTable, "no table named '\(name)'", field: "table")
        }
        try authorizer.requireTable(request, table: name, write: write)
        return schema
    }

    /// The live row `id` of `schema`'s table if the caller may see it: nil when it does not
    /// exist, is deleted, or lies outside the caller's token scope — alike, so that a scoped
    /// token cannot tell a row outside its scope from a missing one.
    func visibleRow(_ request: Request, schema: TableSchema, id: String) async throws -> StoredRow? {
        let scope = try authorizer.scope(of: request, table: schema.name)
        guard let row = try await store.row(table: schema.name, id: id), !row.deleted else { return nil }
        if let scope, !scope.matches({ schema.columnIndex($0).map { row.values[$0] } }) { return nil }
        return row
    }

    /// The request body parsed as JSON, nil when it is empty. A body sent with
    /// `Content-Encoding: zstd` or `deflate` is decompressed first, within the same limit.
    ///
    /// - Throws: `body_too_large` past `limits.max_body_bytes` (sent or decompressed),
    ///   `unsupported_encoding` for another coding (a gzip body read as JSON would only say
    ///   `malformed_json` at its first byte), `bad_encoding` for a body that does not
    ///   decompress, `malformed_json` with the byte offset of the problem.
    func jsonBody(_ request: Request) async throws -> JSONValue? {
        let coded = request.headers[.contentEncoding].map { ContentCoding(header: $0) != .identity } ?? false
        do {
            if coded {
                let bytes = try await BodyCoding.body(of: request, maxBytes: maxBodyBytes, maxDecompressedBytes: maxBodyBytes)
                return bytes.isEmpty ? nil : try JSONParser.parse(bytes)
            }
            let buffer = try await BodyCoding.collect(request, maxBytes: maxBodyBytes)
            guard buffer.readableBytes > 0 else { return nil }
            return try buffer.withUnsafeReadableBytes { bytes throws(JSONParseError) in try JSONParser.parse(bytes) }
        } catch let error as JSONParseError {
            throw DallyError(error)
        }
    }
}
