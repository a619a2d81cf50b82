import HTTPTypes
import Hummingbird

/// A response that goes on as a stream of JSON documents, one per line (NDJSON): the head
/// it needs to pass proxies unbuffered, and the framing of each line.
///
/// ```swift
/// Response(status: .ok, headers: LineStream.headers, body: ResponseBody { writer in
///     try await writer.write(LineStream.line(document))
///     try await writer.finish(nil)
/// })
/// ```
public enum LineStream {
    /// `Content-Type: application/x-ndjson`, not cached, and `X-Accel-Buffering: no`: nginx
    /// and proxies like it otherwise hold a response back to fill their buffers.
    public static var headers: HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = "application/x-ndjson"
        headers[.cacheControl] = "no-cache"
        if let accel = HTTPField.Name("X-Accel-Buffering") { headers[accel] = "no" }
        return headers
    }

    /// `document` and the newline that ends it.
    public static func line(_ document: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(document.count + 1)
        buffer.writeBytes(document)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }
}
