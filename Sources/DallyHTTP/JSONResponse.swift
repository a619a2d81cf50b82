import DallyCore
import Hummingbird

/// Builds JSON responses: from `Encodable` documents (stats, answers, errors), or from a
/// ``JSONWriter``'s bytes where rows go from SQLite to the wire without an intermediate value.
public enum JSONResponse {
    /// The JSON of `document` (``DocumentEncoder``).
    ///
    /// ```swift
    /// return try JSONResponse.encoded(SyncAnswer.queued(reason), status: .accepted)
    /// ```
    public static func encoded(
        _ document: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) throws -> Response {
        make(ByteBuffer(bytes: try DocumentEncoder.encode(document)), status: status, headers: headers)
    }

    /// `GET /healthz`'s answer, `{"status":"ok"}`: the same bytes every time, encoded once (the
    /// route is the servers' HTTP ceiling in the benchmarks, and probes call it often).
    public static var healthy: Response { make(healthyBody) }

    private static let healthyBody = ByteBuffer(
        bytes: (try? DocumentEncoder.encode(["status": "ok"])) ?? Array(#"{"status":"ok"}"#.utf8))

    /// `GET /readyz`'s answer when ready, `{"status":"ready"}`.
    public static var ready: Response { make(readyBody) }

    private static let readyBody = ByteBuffer(
        bytes: (try? DocumentEncoder.encode(["status": "ready"])) ?? Array(#"{"status":"ready"}"#.utf8))

    public static func make(_ writer: JSONWriter, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        make(ByteBuffer(bytes: writer.bytes), status: status, headers: headers)
    }

    public static func make(_ body: ByteBuffer, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: body))
    }

    /// `{"error":{"code":…,"message":…,"field":…},"current":{…}}` (``ErrorDocument``): `current`
    /// (the row as it is now) only for a version mismatch when the table's schema is known;
    /// `Retry-After` when the server is momentarily full, stopping, or without its database.
    public static func error(_ error: DallyError, schema: TableSchema? = nil) -> Response {
        var headers: HTTPFields = [:]
        if [.tooManyWaiters, .shuttingDown, .storeUnavailable].contains(error.code) { headers[.retryAfter] = "1" }
        let document = ErrorDocument(error, schema: schema)
        guard let response = try? encoded(document, status: error.code.status, headers: headers) else {
            // Encoding strings and numbers does not fail; should it, the status still tells.
            return Response(status: error.code.status, headers: headers)
        }
        return response
    }

    /// A single row, with its sequence number as the ETag.
    public static func row(_ row: StoredRow, schema: TableSchema) -> Response {
        var writer = JSONWriter()
        row.write(to: &writer, schema: schema)
        return make(writer, headers: [.eTag: "\"\(row.seq)\""])
    }
}
