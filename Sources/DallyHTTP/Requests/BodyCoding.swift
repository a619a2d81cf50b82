import DallyCompression
import DallyCore
import Hummingbird

/// Compressed bodies on the sync protocol's routes: request bodies decoded as their
/// `Content-Encoding` says, within two limits, and responses compressed as the caller's
/// `Accept-Encoding` allows.
public enum BodyCoding {
    /// The request body, decompressed.
    ///
    /// The compressed size is bounded while it is read, the decompressed size while it is
    /// decompressed: a compression bomb is stopped at `maxDecompressedBytes`, never expanded.
    ///
    /// - Throws: `body_too_large` past either limit, `unsupported_encoding` for a coding other
    ///   than zstd, deflate or identity, `bad_encoding` for a body that does not decompress.
    ///
    /// - Parameter dictionaries: finds the zstd dictionaries a body's frames name, throwing
    ///   `unknown_dictionary` for one the caller does not hold; nil refuses every such body.
    public static func body(
        of request: Request, maxBytes: Int, maxDecompressedBytes: Int,
        dictionaries: (@Sendable (Set<UInt32>) async throws -> [UInt32: ZstdDictionary])? = nil
    ) async throws -> [UInt8] {
        let coding: ContentCoding
        if let header = request.headers[.contentEncoding] {
            guard let known = ContentCoding(header: header) else {
                throw DallyError(
                    .unsupportedEncoding, "Content-Encoding '\(header)' is not supported; use zstd, deflate or identity")
            }
            coding = known
        } else {
            coding = .identity
        }
        let buffer = try await collect(request, maxBytes: maxBytes)
        return try await decode(buffer, coding: coding, maxDecompressedBytes: maxDecompressedBytes, dictionaries: dictionaries)
    }

    /// `buffer`, a body as sent in `coding`, decompressed (a framed batch body once whole):
    /// the same rules and errors as ``body(of:maxBytes:maxDecompressedBytes:dictionaries:)``.
    public static func decode(
        _ buffer: ByteBuffer, coding: ContentCoding, maxDecompressedBytes: Int,
        dictionaries: (@Sendable (Set<UInt32>) async throws -> [UInt32: ZstdDictionary])? = nil
    ) async throws -> [UInt8] {
        var found: [UInt32: ZstdDictionary] = [:]
        if coding == .zstd {
            let named: Set<UInt32>
            do {
                named = try buffer.withUnsafeReadableBytes { bytes throws(DecompressionError) in
                    try ZstdFrameHeaders.dictionaryIDs(in: bytes)
                }
            } catch {
                throw DallyError(.badEncoding, "the zstd body does not decompress: \(error)")
            }
            if let first = named.min(), dictionaries == nil {
                throw DallyError(.unknownDictionary, "this route takes no dictionary, and the body names dictionary \(first)")
            }
            if let dictionaries, !named.isEmpty { found = try await dictionaries(named) }
        }
        do {
            return try buffer.withUnsafeReadableBytes { bytes throws(DecompressionError) in
                try Decompressor.decompress(bytes, coding: coding, maxOutput: maxDecompressedBytes) { found[$0] }
            }
        } catch .unknownDictionary(let id) {
            throw DallyError(.unknownDictionary, "the body names dictionary \(id), which is not held here")
        } catch .tooLarge(let limit) {
            throw DallyError(
                .bodyTooLarge, "the body decompresses to more than \(limit) bytes (limits.max_decompressed_bytes)")
        } catch .corrupt(let reason) {
            throw DallyError(.badEncoding, "the \(coding.rawValue) body does not decompress: \(reason)")
        }
    }

    /// The whole request body, at most `maxBytes` (`limits.max_body_bytes`).
    ///
    /// A `Content-Length` over the limit is refused before a byte of the body is read, as
    /// nginx's `client_max_body_size` does: the client is answered at once, whether it sends
    /// the body, waits for `100 Continue`, or never sends it.
    ///
    /// - Throws: `body_too_large`, naming the limit in words and bytes.
    public static func collect(_ request: Request, maxBytes: Int) async throws -> ByteBuffer {
        if let announced = announcedLength(request), announced > maxBytes {
            throw tooLarge(maxBytes)
        }
        do {
            return try await request.body.collect(upTo: maxBytes)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw tooLarge(maxBytes)
        }
    }

    /// The body's length as the request's head announces it; nil without a `Content-Length`.
    static func announcedLength(_ request: Request) -> Int? {
        request.headers[.contentLength].flatMap(Int.init)
    }

    private static func tooLarge(_ maxBytes: Int) -> DallyError {
        DallyError(
            .bodyTooLarge,
            "the request body is larger than the \(ByteCount.words(maxBytes)) (\(maxBytes) bytes) this server accepts (limits.max_body_bytes)")
    }

    /// Parses a JSON body.
    ///
    /// - Throws: `malformed_json` with the byte offset of the problem.
    public static func json(_ bytes: [UInt8]) throws(DallyError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw DallyError(error)
        }
    }

    /// A JSON response, compressed with the best coding `request` accepts when it is larger
    /// than `minimumSize` (below that, a frame's overhead outweighs the saving).
    public static func response(
        json bytes: [UInt8], to request: Request, zstdLevel: Int = 3, minimumSize: Int = 256
    ) -> Response {
        var coding = ContentCoding.identity
        if bytes.count >= minimumSize, let accept = request.headers[.acceptEncoding] {
            coding = ContentCoding.negotiate(acceptEncoding: accept) ?? .identity
        }
        let level = coding == .zstd ? zstdLevel : Compressor.defaultLevel(for: coding)
        // Sent as it is when compression would not make it smaller (repetitive JSON of a few
        // hundred bytes usually shrinks; a page of random ids may not).
        guard coding != .identity, let compressed = try? Compressor.compress(bytes, coding: coding, level: level),
            compressed.count < bytes.count
        else {
            return JSONResponse.make(ByteBuffer(bytes: bytes))
        }
        var headers: HTTPFields = [.vary: "Accept-Encoding"]
        headers[.contentEncoding] = coding.rawValue
        return JSONResponse.make(ByteBuffer(bytes: compressed), headers: headers)
    }
}
