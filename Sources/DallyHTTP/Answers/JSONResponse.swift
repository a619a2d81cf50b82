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
        // Encoding strings and numbers does not fail; should it, the status still tells.
        guard let document = try? DocumentEncoder.encode(ErrorDocument(error)) else {
            return Response(status: error.code.status, headers: headers)
        }
        guard let current = error.current, let schema else {
            return make(ByteBuffer(bytes: document), status: error.code.status, headers: headers)
        }
        // The row as the row routes write it (a REAL `1.0`, the columns in declaration order),
        // not parsed and encoded again: it read `"total":1` beside the answers' `1.0`. Keys in
        // the document's sorted order: `current`, then `error`.
        var writer = JSONWriter(capacity: document.count + 256)
        writer.raw("{\"current\":")
        current.write(to: &writer, schema: schema)
        writer.raw(",")
        writer.rawBytes(Array(document.dropFirst()))
        return make(writer, status: error.code.status, headers: headers)
    }

    /// A single row, with its sequence number as the ETag.
    public static func row(_ row: StoredRow, schema: TableSchema) -> Response {
        var writer = JSONWriter()
        row.write(to: &writer, schema: schema)
        return make(writer, headers: [.eTag: rowTag(row)])
    }

    /// A row's entity tag: its local sequence number, quoted (`"17"`), which every write
    /// changes; `If-Match` on a write names it.
    public static func rowTag(_ row: StoredRow) -> String { "\"\(row.seq)\"" }
}
