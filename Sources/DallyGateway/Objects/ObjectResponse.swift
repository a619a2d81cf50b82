import DallyCore
import DallyHTTP
import DallyObjects
import Foundation
import Hummingbird

/// Answers a read of an object: validators, conditional requests, byte ranges, and a body
/// streamed chunk by chunk from the chunk store.
///
/// The ETag is the object's content hash, so it names the bytes wherever they are served
/// from and a client's cached copy stays valid for as long as the row references the same
/// object. A range reads only the chunks that hold it.
enum ObjectResponse {
    static func make(_ manifest: ObjectManifest, request: Request, chunks: any ChunkStore, head: Bool) -> Response {
        let etag = "\"\(manifest.hash.hex)\""
        var headers: HTTPFields = [.eTag: etag, .acceptRanges: "bytes", .contentType: "application/octet-stream"]
        if let ifNoneMatch = request.headers[.ifNoneMatch], EntityTag.isListed(etag, in: ifNoneMatch) {
            return Response(status: .notModified, headers: [.eTag: etag, .acceptRanges: "bytes"])
        }
        var range: ClosedRange<Int64>? = nil
        if let header = request.headers[.range], rangeApplies(request, etag: etag) {
            switch ByteRange.parse(header, size: manifest.size) {
            case .whole:
                break
            case .partial(let selected):
                range = selected
            case .unsatisfiable:
                var response = JSONResponse.error(
                    DallyError(
                        .rangeNotSatisfiable,
                        "the range '\(header)' selects no byte of this \(manifest.size)-byte object", field: "Range"))
                response.headers[.contentRange] = ByteRange.unsatisfiedContentRange(size: manifest.size)
                return response
            }
        }
        let status: HTTPResponse.Status
        let selected: ClosedRange<Int64>?
        if let range {
            status = .partialContent
            selected = range
            headers[.contentRange] = ByteRange.contentRange(range, size: manifest.size)
        } else {
            status = .ok
            selected = manifest.size > 0 ? 0...(manifest.size - 1) : nil
        }
        let length = selected.map { $0.upperBound - $0.lowerBound + 1 } ?? 0
        headers[.contentLength] = String(length)
        guard !head, let selected else { return Response(status: status, headers: headers, body: ResponseBody()) }
        let body = ResponseBody(contentLength: Int(length)) { writer in
            try await stream(manifest, range: selected, chunks: chunks, to: &writer)
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// Writes bytes `range` of the object, reading only the chunks that hold them, one at a time.
    static func stream(
        _ manifest: ObjectManifest, range: ClosedRange<Int64>, chunks: any ChunkStore, to writer: inout any ResponseBodyWriter
    ) async throws {
        let covering = manifest.chunks(covering: range)
        var offset = covering.offset
        for entry in covering.chunks {
            guard let bytes = try await chunks.get(entry.hash), bytes.count == entry.size else {
                // The headers are sent: failing closes the connection short of Content-Length.
                throw DallyError(
                    .storage, "chunk \(entry.hash.hex) of object \(manifest.hash.hex) is missing from the chunk store")
            }
            let from = Int(max(range.lowerBound - offset, 0))
            let to = Int(min(range.upperBound - offset + 1, Int64(entry.size)))
            try await writer.write(ByteBuffer(bytes: bytes[from..<to]))
            offset += Int64(entry.size)
        }
    }

    /// A `Range` counts unless `If-Range` names another version of the object (then the whole
    /// object is sent, RFC 9110 §13.1.5). Only ETags are compared; a date never matches.
    static func rangeApplies(_ request: Request, etag: String) -> Bool {
        guard let ifRange = request.headers[.ifRange] else { return true }
        return ifRange.trimmingCharacters(in: .whitespaces) == etag
    }
}
