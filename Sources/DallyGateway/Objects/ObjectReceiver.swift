import DallyCore
import DallyObjects
import DallyStore
import Hummingbird

/// Receives an object from a request body as it streams in: cuts it into chunks, stores each
/// chunk under its SHA-256, hashes the whole, and hands the manifest to the caller to record.
///
/// The body is never held whole: memory is one network buffer plus the chunker's window (at
/// most one maximum-size chunk). A body past `objects.max_bytes` is refused as soon as it
/// passes it, not after it has been read; one that local writes could not record for want of
/// space (the free-space floor, the replica's bound) is refused before its bytes are stored, and
/// stops as soon as it runs into them. Chunks are stored before the manifest is recorded,
/// so an upload that fails or stops half-way — too large, a digest mismatch, a client that
/// went away — leaves only chunks no manifest lists, which GC sweeps after its grace.
struct ObjectReceiver: Sendable {
    let chunks: any ChunkStore
    let intakes: ObjectIntakes
    let counters: ObjectCounters
    let maxBytes: Int64
    let chunking: ChunkingParameters
    let now: @Sendable () -> Int64
    /// Throws while local writes are refused for space (``ReplicaStore/requireRoomForLocalWrites()``):
    /// asked before the body is read and before each chunk is stored.
    let room: @Sendable () throws(DallyError) -> Void

    /// Reads `request`'s body as an object and calls `record` with its manifest; `record`'s
    /// result is returned, and the upload counted, once it has recorded the object.
    ///
    /// - Throws: ``DallyError`` `unsupported_encoding` for a compressed body (an object's hash
    ///   is of its bytes as sent), `bad_request` for a malformed digest header,
    ///   `object_too_large` (before reading when `Content-Length` says so), `hash_mismatch`,
    ///   or what `record` throws; a client that disconnects ends in the body's error.
    func receive<T: Sendable>(_ request: Request, record: (ObjectManifest) async throws -> T) async throws -> T {
        if let coding = request.headers[.contentEncoding], coding.lowercased() != "identity" {
            throw DallyError(
                .unsupportedEncoding, "objects are uploaded as they are (no Content-Encoding); got '\(coding)'")
        }
        let declared = try declaredLength(request)
        let expected = try ExpectedDigest.read(request.headers)
        try room()
        return try await intakes.receiving(startedAt: now()) {
            var whole = StreamingHash()
            var chunker = StreamingChunker(chunking)
            var sink = ChunkSink(chunks: chunks, now: now, room: room)
            var cut: [(hash: ContentHash, bytes: [UInt8])] = []
            var body = request.body.makeAsyncIterator()
            while let buffer = try await Self.next(&body) {
                guard whole.count + Int64(buffer.readableBytes) <= maxBytes else { throw tooLarge }
                buffer.withUnsafeReadableBytes { raw in
                    whole.update(raw)
                    chunker.append(raw) { cut.append((ContentHash.of($0), Array($0))) }
                }
                for chunk in cut { try await sink.store(chunk.hash, chunk.bytes) }
                cut.removeAll(keepingCapacity: true)
            }
            chunker.finish { cut.append((ContentHash.of($0), Array($0))) }
            for chunk in cut { try await sink.store(chunk.hash, chunk.bytes) }

            // A connection that closes mid-body may end the body early rather than fail it.
            if let declared, declared != whole.count {
                throw DallyError(
                    .badRequest, "the body ended after \(whole.count) of the \(declared) bytes Content-Length announced")
            }
            let hash = whole.finalize()
            if let expected, expected != hash {
                throw DallyError(
                    .hashMismatch,
                    "the body's SHA-256 is \(hash.hex), not \(expected.hex) as the request's digest header says; nothing was recorded",
                    field: "hash")
            }
            let manifest = try ObjectManifest(hash: hash, size: whole.count, chunks: sink.entries)
            let result = try await record(manifest)
            counters.recordUpload(deduplicatedChunks: sink.deduplicated, deduplicatedBytes: sink.deduplicatedBytes)
            return result
        }
    }

    /// The next piece of the body. A body that breaks off (the client went away) is the
    /// client's doing, answered — to nobody, usually — as a bad request rather than logged as
    /// the gateway's failure.
    private static func next(_ body: inout RequestBody.AsyncIterator) async throws(DallyError) -> ByteBuffer? {
        do {
            return try await body.next()
        } catch {
            throw DallyError(.badRequest, "the upload broke off before the end of its body (\(error))")
        }
    }

    /// `Content-Length`, refused at once when it is over the limit.
    private func declaredLength(_ request: Request) throws(DallyError) -> Int64? {
        guard let header = request.headers[.contentLength] else { return nil }
        guard let length = Int64(header), length >= 0 else {
            throw DallyError(.badRequest, "Content-Length must be a number of bytes", field: "Content-Length")
        }
        guard length <= maxBytes else { throw tooLarge }
        return length
    }

    private var tooLarge: DallyError {
        DallyError(.objectTooLarge, "the object is larger than this gateway accepts (objects.max_bytes = \(maxBytes) bytes)")
    }
}

/// Stores the chunks of one object in order and lists them for its manifest.
private struct ChunkSink {
    let chunks: any ChunkStore
    let now: @Sendable () -> Int64
    let room: @Sendable () throws(DallyError) -> Void
    private(set) var entries: [ChunkEntry] = []
    /// Chunks (and their bytes) the store held already.
    private(set) var deduplicated = 0
    private(set) var deduplicatedBytes: Int64 = 0

    init(chunks: any ChunkStore, now: @escaping @Sendable () -> Int64, room: @escaping @Sendable () throws(DallyError) -> Void) {
        self.chunks = chunks
        self.now = now
        self.room = room
    }

    mutating func store(_ hash: ContentHash, _ bytes: [UInt8]) async throws {
        try room()
        if try await !chunks.put(hash, bytes: bytes, now: now()) {
            deduplicated += 1
            deduplicatedBytes += Int64(bytes.count)
        }
        entries.append(ChunkEntry(hash: hash, size: bytes.count))
    }
}
