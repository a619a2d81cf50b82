import DallyCompression
import DallyCore
import DallyHTTP
import DallyObjects
import Hummingbird

/// Resumable uploads: a request with `Dally-Upload-Length` carries bytes
/// `Dally-Upload-Offset…` of a body as sent (compressed as `Dally-Upload-Encoding` says), and
/// may stop short of its end. `PUT /v1/chunks/{hash}` takes chunks so (PROTOCOL.md §13.2.1),
/// `POST /v1/batches` batch bodies (§6.1, keyed by `Dally-Upload-Hash`).
///
/// Every byte that arrives is kept as it arrives (``PartialUploads``), so a frame cut by the
/// network leaves what came through; the gateway learns where the partial ends (the
/// missing-chunks answer's `"partial"`, or an empty frame) and goes on from that byte. A frame
/// that completes the body gives the whole body to the route's usual checks.
struct UploadFrames: Sendable {
    let partials: PartialUploads

    static let lengthHeader = "Dally-Upload-Length"
    static let offsetHeader = "Dally-Upload-Offset"
    static let encodingHeader = "Dally-Upload-Encoding"
    static let hashHeader = "Dally-Upload-Hash"

    /// What one frame left.
    enum Received {
        /// The body is whole: its bytes as sent, and their coding.
        case whole([UInt8], ContentCoding)
        /// The body ends at `offset` of `length`: more frames are to come.
        case partial(offset: Int, length: Int)
        /// The frame does not continue the partial held, which ends at `held`.
        case offsetRefused(held: Int)
    }

    /// Whether `request` is a framed upload: it has `Dally-Upload-Length`.
    ///
    /// - Throws: `bad_request` for another frame header without it, which would otherwise be
    ///   ignored and the body taken whole from its first byte, wherever the client meant it to go.
    static func isFramed(_ request: Request) throws(DallyError) -> Bool {
        guard header(request, lengthHeader) == nil else { return true }
        for name in [offsetHeader, encodingHeader, hashHeader] where header(request, name) != nil {
            throw DallyError(
                .badRequest, "\(name) needs \(lengthHeader), the whole body's length as sent: a frame is a part of that",
                field: name)
        }
        return false
    }

    /// Takes one frame of `hash`'s body: the body as sent once whole, undecoded.
    ///
    /// A frame with no body (`Content-Length: 0`) only asks where the partial ends, and
    /// changes nothing.
    ///
    /// - Throws: `bad_request` for a malformed header, `body_too_large` for a length over
    ///   `maxBytes` or a frame past the length, `unsupported_encoding` for an unknown coding;
    ///   whatever cut the request body (what arrived before is kept).
    func receive(_ request: Request, hash: ContentHash, maxBytes: Int) async throws -> Received {
        let length = try Self.number(request, Self.lengthHeader, range: 1...Int.max)
        guard length <= maxBytes else {
            throw DallyError(.bodyTooLarge, "\(Self.lengthHeader) \(length) is over the \(maxBytes) bytes this route takes")
        }
        let offset = try Self.number(request, Self.offsetHeader, range: 0...(length - 1), default: 0)
        let codingName = Self.header(request, Self.encodingHeader) ?? ContentCoding.identity.rawValue
        guard let coding = ContentCoding(header: codingName) else {
            throw DallyError(.unsupportedEncoding, "\(Self.encodingHeader) '\(codingName)': use zstd, deflate or identity")
        }
        if request.headers[.contentLength] == "0" {
            return .partial(offset: await partials.end(of: hash, length: length, coding: coding.rawValue), length: length)
        }
        var end = offset
        do {
            // Checks the offset before the first byte is kept.
            end = try await partials.append([UInt8](), to: hash, at: offset, length: length, coding: coding.rawValue)
            for try await piece in request.body {
                guard end + piece.readableBytes <= length else {
                    throw DallyError(.bodyTooLarge, "the frame runs past \(Self.lengthHeader) (\(length) bytes)")
                }
                end = try await partials.append(
                    Array(piece.readableBytesView), to: hash, at: end, length: length, coding: coding.rawValue)
            }
        } catch PartialUploads.Refusal.offset(let held) {
            return .offsetRefused(held: held)
        }
        guard end == length, let whole = await partials.takeWhole(hash) else {
            return .partial(offset: end, length: length)
        }
        return .whole(whole.bytes, coding)
    }

    /// The `Dally-Upload-Hash` a framed batch body is keyed by: the SHA-256 of the body as sent.
    static func bodyHash(_ request: Request) throws(DallyError) -> ContentHash {
        guard let text = header(request, hashHeader) else {
            throw DallyError(.badRequest, "a framed batch names its body's SHA-256 in \(hashHeader)", field: hashHeader)
        }
        guard let hash = ContentHash(hex: text) else {
            throw DallyError(.badRequest, "\(hashHeader) '\(text.prefix(80))' is not 64 hex digits", field: hashHeader)
        }
        return hash
    }

    /// `202 {"offset":n,"length":total}`: the frame was kept, more are to come.
    static func partialAnswer(offset: Int, length: Int) -> Response {
        var writer = JSONWriter()
        writer.value(.object([JSONMember("offset", .int(Int64(offset))), JSONMember("length", .int(Int64(length)))]))
        return JSONResponse.make(writer, status: .accepted)
    }

    /// `409 upload_offset` with where the partial held ends.
    static func offsetAnswer(held: Int) -> Response {
        let code = DallyError.Code.uploadOffset
        let message = "the cloud's partial body ends at byte \(held); send the frame from there"
        let document = UploadOffsetDocument(
            error: ErrorDocument.Body(code: code.rawValue, message: message, field: nil), offset: held)
        guard let response = try? JSONResponse.encoded(document, status: code.status) else {
            return JSONResponse.error(DallyError(code, message))
        }
        return response
    }

    private static func header(_ request: Request, _ name: String) -> String? {
        let lowercased = name.lowercased()
        return request.headers.first { $0.name.canonicalName == lowercased }?.value
    }

    private static func number(
        _ request: Request, _ name: String, range: ClosedRange<Int>, default fallback: Int? = nil
    ) throws(DallyError) -> Int {
        guard let text = header(request, name) else {
            if let fallback { return fallback }
            throw DallyError(.badRequest, "\(name) is missing")
        }
        guard let value = Int(text), range.contains(value) else {
            throw DallyError(.badRequest, "\(name) '\(text.prefix(40))' is not a number in \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }
}
