import DallyCore
import Hummingbird

/// Builds JSON responses from a ``JSONWriter``'s bytes.
public enum JSONResponse {
    public static func make(_ writer: JSONWriter, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        make(ByteBuffer(bytes: writer.bytes), status: status, headers: headers)
    }

    public static func make(_ body: ByteBuffer, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: body))
    }

    /// `{"error":{"code":…,"message":…,"field":…},"current":{…}}`: `current` (the row as it is
    /// now) only for a version mismatch when the table's schema is known; `Retry-After` when
    /// the gateway is momentarily full or stopping.
    public static func error(_ error: DallyError, schema: TableSchema? = nil) -> Response {
        var writer = JSONWriter()
        writer.raw("{\"error\":{\"code\":")
        writer.string(error.code.rawValue)
        writer.raw(",\"message\":")
        writer.string(error.message)
        if let field = error.field {
            writer.raw(",\"field\":")
            writer.string(field)
        }
        writer.raw("}")
        if let current = error.current, let schema {
            writer.raw(",\"current\":")
            current.write(to: &writer, schema: schema)
        }
        writer.raw("}")
        var headers: HTTPFields = [:]
        if error.code == .tooManyWaiters || error.code == .shuttingDown { headers[.retryAfter] = "1" }
        return make(writer, status: error.code.status, headers: headers)
    }

    /// A single row, with its sequence number as the ETag.
    public static func row(_ row: StoredRow, schema: TableSchema) -> Response {
        var writer = JSONWriter()
        row.write(to: &writer, schema: schema)
        return make(writer, headers: [.eTag: "\"\(row.seq)\""])
    }
}
