import DallyCompression
import DallyCore
import DallyHTTP
import DallyObjects
import DallySync
import Hummingbird

/// `/v1/chunks` and `/v1/objects`: the bytes of `OBJECT` columns, uploaded by gateways as
/// content-addressed chunks and a manifest (PROTOCOL.md §13).
///
/// An upload is ask, chunks, manifest: `POST /v1/chunks/missing` names the chunks the cloud
/// lacks, each is sent with `PUT /v1/chunks/{hash}`, and `PUT /v1/objects/{hash}` records the
/// object once the cloud holds every chunk and they hash to the object's hash. A resumed upload
/// is the same walk. Hashes are the only keys: nothing a request holds names a file.
///
/// Objects are shared by every gateway, like the rows that reference them: chunks are not
/// secrets, since a gateway can fetch a chunk only by knowing the hash of its content.
struct ObjectRoutes<C: Clock>: Sendable where C.Duration == Duration {
    let store: any CloudStore
    let authenticator: GatewayAuthenticator
    let limits: Limits
    let counters: CloudObjectCounters
    /// Chunks sent in frames, or cut, kept from one request to the next.
    let frames: UploadFrames
    /// Manifests waiting for chunks still on their way.
    let arrivals: ChunkArrivals
    let clock: C
    let now: @Sendable () -> Int64

    struct Limits: Sendable {
        /// For the manifest, as for batches (`limits.max_body_bytes`, …).
        var maxBodyBytes: Int
        var maxDecompressedBytes: Int
        /// `objects.max_bytes`.
        var maxObjectBytes: Int64
        /// The longest a manifest waits for its chunks (`limits.max_wait`, as a long-poll).
        var maxWait: Duration
    }

    /// How often a waiting manifest reads the store again: a chunk stored on another cloud
    /// node wakes nobody on this one.
    static var waitSlice: Duration { .seconds(1) }

    /// The most hashes one ask may name, and the most a `missing_chunks` answer lists.
    static var maxListed: Int { 10_000 }

    /// The largest ask, sent or decoded: room for ``maxListed`` quoted hashes and commas, so
    /// that a full ask fits whatever `limits.max_body_bytes` is.
    static var maxAskBytes: Int { maxListed * (ContentHash.hexCount + 3) + 1024 }

    /// The largest chunk body, as sent or decoded: chunk routes take chunk-sized bodies even
    /// when `limits.max_body_bytes` is smaller, without raising it for any other route.
    static var maxChunkBytes: Int { ObjectManifest.maxChunkBytes }

    func register(on router: Router<DallyRequestContext>) {
        router.post("/v1/chunks/missing") { request, context in try await missing(request, context) }
        router.put("/v1/chunks/:hash") { request, context in try await putChunk(request, context) }
        router.get("/v1/chunks/:hash") { request, context in try await getChunk(request, context) }
        router.put("/v1/objects/:hash") { request, context in try await putObject(request, context) }
        router.get("/v1/objects/:hash") { request, context in try await getObject(request, context) }
    }

    // MARK: Chunks

    /// `POST /v1/chunks/missing`, `{"chunks": ["<hash>", …]}`: `{"missing": [...]}`, the ones
    /// the cloud does not hold, in the order asked (each once).
    func missing(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        _ = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let body: [UInt8]
        do {
            body = try await BodyCoding.body(of: request, maxBytes: Self.maxAskBytes, maxDecompressedBytes: Self.maxAskBytes)
        } catch let error as DallyError where error.code == .bodyTooLarge {
            throw DallyError(.bodyTooLarge, "an ask has at most \(Self.maxAskBytes) bytes, sent or decoded")
        }
        guard case .array(let list)? = try BodyCoding.json(body)["chunks"] else {
            throw DallyError(.badRequest, "send {\"chunks\": [\"<64 hex digits>\", …]}", field: "chunks")
        }
        guard list.count <= Self.maxListed else {
            throw DallyError(.badRequest, "ask about at most \(Self.maxListed) chunks at a time, not \(list.count)", field: "chunks")
        }
        var asked: [ContentHash] = []
        var seen: Set<ContentHash> = []
        for (i, element) in list.enumerated() {
            guard case .string(let hex) = element, let hash = ContentHash(hex: hex) else {
                throw DallyError(.badRequest, "chunks[\(i)] is not 64 hex digits", field: "chunks[\(i)]")
            }
            if seen.insert(hash).inserted { asked.append(hash) }
        }
        let present = try await store.chunks.present(asked)
        let missing = asked.filter { !present.contains($0) }
        let partial = await frames.partials.offsets(missing)
        var answer = [JSONMember("missing", .array(missing.map { .string($0.hex) }))]
        if !partial.isEmpty {
            // Where cut uploads of missing chunks end: the gateway goes on from there.
            let offsets = missing.compactMap { hash in partial[hash].map { JSONMember(hash.hex, .int(Int64($0))) } }
            answer.append(JSONMember("partial", .object(offsets)))
        }
        var writer = JSONWriter()
        writer.value(.object(answer))
        return BodyCoding.response(json: writer.bytes, to: request)
    }

    /// `PUT /v1/chunks/{hash}`, the chunk's bytes (zstd or deflate allowed): 201
    /// `{"stored":true}`, or 200 `{"stored":false}` when the cloud held it already. With
    /// `Dally-Upload-Length`, one frame of a resumable upload (``UploadFrames``): 202
    /// `{"offset","length"}` until the last frame.
    func putChunk(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        _ = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let hash = try Self.hash(context)
        let bytes: [UInt8]
        if try UploadFrames.isFramed(request) {
            switch try await frames.receive(request, hash: hash, maxBytes: Self.maxChunkBytes) {
            case .whole(let encoded, let coding):
                do {
                    bytes = try Decompressor.decompress(encoded, coding: coding, maxOutput: Self.maxChunkBytes)
                } catch {
                    throw DallyError(.badEncoding, "the chunk's \(coding.rawValue) body does not decompress: \(error)")
                }
            case .partial(let offset, let length): return UploadFrames.partialAnswer(offset: offset, length: length)
            case .offsetRefused(let held): return UploadFrames.offsetAnswer(held: held)
            }
        } else {
            bytes = try await Self.wholeChunk(request)
        }
        guard !bytes.isEmpty else { throw DallyError(.badRequest, "a chunk has at least one byte") }
        let content = ContentHash.of(bytes)
        guard content == hash else {
            throw DallyError(
                .hashMismatch, "the body hashes to \(content.hex), not \(hash.hex); nothing was stored", field: "hash")
        }
        let stored = try await store.chunks.put(hash, bytes: bytes, now: now())
        counters.chunkReceived(bytes: bytes.count, deduplicated: !stored)
        arrivals.stored(hash)
        return try JSONResponse.encoded(ChunkStoredDocument(stored: stored), status: stored ? .created : .ok)
    }

    /// A chunk sent whole in one request, decoded.
    static func wholeChunk(_ request: Request) async throws -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try await BodyCoding.body(of: request, maxBytes: Self.maxChunkBytes, maxDecompressedBytes: Self.maxChunkBytes)
        } catch let error as DallyError where error.code == .bodyTooLarge {
            throw DallyError(.bodyTooLarge, "a chunk has at most \(Self.maxChunkBytes) bytes, sent or decoded")
        }
        return bytes
    }

    /// `GET /v1/chunks/{hash}`: the bytes, zstd-compressed when the client accepts it and it
    /// helps; `ETag: "<hash>"`, so a client holding the chunk gets 304.
    func getChunk(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        _ = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let hash = try Self.hash(context)
        let tag = "\"\(hash.hex)\""
        if let ifNoneMatch = request.headers[.ifNoneMatch], EntityTag.isListed(tag, in: ifNoneMatch) {
            guard try await store.chunks.present([hash]).contains(hash) else { throw Self.noChunk(hash) }
            return Response(status: .notModified, headers: [.eTag: tag])
        }
        guard let bytes = try await store.chunks.get(hash) else { throw Self.noChunk(hash) }
        var headers: HTTPFields = [
            .contentType: "application/octet-stream", .eTag: tag, .vary: "Accept-Encoding", .acceptRanges: "bytes",
        ]
        var representation = bytes
        if let accept = request.headers[.acceptEncoding], ContentCoding.negotiate(acceptEncoding: accept) == .zstd,
            let compressed = try? Compressor.compress(bytes, coding: .zstd, level: 3), compressed.count < bytes.count
        {
            headers[.contentEncoding] = ContentCoding.zstd.rawValue
            representation = compressed
        }
        // A download cut part-way resumes where it stopped (`Range: bytes=n-`). The range is
        // of the bytes sent, compressed or not (RFC 9110 §14.1.2): zstd at one level gives the
        // same bytes each time, and the gateway checks the chunk's hash once it is whole.
        let size = Int64(representation.count)
        switch request.headers[.range].map({ ByteRange.parse($0, size: size) }) ?? .whole {
        case .whole:
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: representation)))
        case .partial(let range):
            headers[.contentRange] = ByteRange.contentRange(range, size: size)
            let slice = representation[Int(range.lowerBound)...Int(range.upperBound)]
            return Response(status: .partialContent, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: slice)))
        case .unsatisfiable:
            var response = JSONResponse.error(
                DallyError(
                    .rangeNotSatisfiable,
                    "the range '\(request.headers[.range] ?? "")' selects no byte of this chunk's \(size)-byte answer",
                    field: "Range"))
            response.headers[.contentRange] = ByteRange.unsatisfiedContentRange(size: size)
            return response
        }
    }

    // MARK: Objects

    /// `PUT /v1/objects/{hash}`, the manifest: 201 with the reference `{"hash","size","chunks"}`
    /// when recorded, 200 when the cloud held the object already. With `?wait=`, a manifest
    /// whose chunks are still on their way waits for them that long (at most `max_wait`).
    func putObject(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        _ = try await authenticator.gateway(of: request, context: context)
        let hash = try Self.hash(context)
        let wait = try QueryParameters(request, allowed: ["wait"]).wait(maximum: limits.maxWait)
        let body = try await BodyCoding.body(
            of: request, maxBytes: limits.maxBodyBytes, maxDecompressedBytes: limits.maxDecompressedBytes)
        let manifest = try ObjectManifest(json: try BodyCoding.json(body))
        guard manifest.hash == hash else {
            throw DallyError(
                .badRequest, "the manifest is of object \(manifest.hash.hex), not \(hash.hex) as the path says",
                field: "hash")
        }
        guard manifest.size <= limits.maxObjectBytes else {
            throw DallyError(
                .objectTooLarge, "the object has \(manifest.size) bytes; the cloud takes at most \(limits.maxObjectBytes) (objects.max_bytes)")
        }
        if let held = try await store.manifest(of: hash) {
            counters.manifestReceived()
            return Self.reference(held, status: .ok)
        }
        var seen: Set<ContentHash> = []
        let listed = manifest.chunks.map(\.hash).filter { seen.insert($0).inserted }
        let missing = try await missingChunks(of: listed, waitingUpTo: wait)
        guard missing.isEmpty else { return Self.missingChunks(missing) }
        do {
            try await ObjectVerifier.verify(manifest, chunks: store.chunks)
        } catch let gone as ObjectVerifier.MissingChunks {
            return Self.missingChunks(gone.hashes)
        }
        switch try await store.storeObject(manifest, now: now()) {
        case .stored:
            counters.manifestReceived()
            return Self.reference(manifest, status: .created)
        case .alreadyStored:
            counters.manifestReceived()
            return Self.reference(try await store.manifest(of: hash) ?? manifest, status: .ok)
        case .missing(let gone):
            return Self.missingChunks(gone)
        }
    }

    /// The chunks of `listed` the store lacks, after waiting up to `wait` for them to arrive.
    private func missingChunks(of listed: [ContentHash], waitingUpTo wait: Duration) async throws -> [ContentHash] {
        let deadline = clock.now.advanced(by: wait)
        var missing = listed
        var waited = false
        while true {
            // The store is read after the watch began, so a chunk stored in between is found.
            let watch = wait > .zero ? arrivals.watch(missing) : nil
            defer { if let watch { arrivals.end(watch) } }
            let present = try await store.chunks.present(missing)
            missing.removeAll { present.contains($0) }
            guard let watch, !missing.isEmpty, !Task.isCancelled, !arrivals.closed else { return missing }
            // Counted once it finds chunks missing, whether or not its wait has run out by
            // then: a short wait can end while the store is read.
            if !waited {
                counters.manifestWaited()
                waited = true
            }
            guard clock.now < deadline else { return missing }
            _ = await watch.wait(upTo: min(Self.waitSlice, clock.now.duration(to: deadline)), on: clock)
        }
    }

    /// `GET /v1/objects/{hash}`: the manifest of an object the cloud holds complete.
    func getObject(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        _ = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let hash = try Self.hash(context)
        guard let manifest = try await store.manifest(of: hash) else {
            throw DallyError(.notFound, "the cloud holds no complete object \(hash.hex)")
        }
        var writer = JSONWriter(capacity: 96 + 72 * manifest.chunks.count)
        writer.value(manifest.json)
        return BodyCoding.response(json: writer.bytes, to: request)
    }

    // MARK: Answers

    static func hash(_ context: DallyRequestContext) throws(DallyError) -> ContentHash {
        let text = context.parameters.decoded("hash")
        guard let hash = ContentHash(hex: text) else {
            throw DallyError(
                .badRequest, "'\(text.prefix(80))' is not a content hash: use the SHA-256 as 64 hex digits", field: "hash")
        }
        return hash
    }

    static func noChunk(_ hash: ContentHash) -> DallyError {
        DallyError(.notFound, "the cloud holds no chunk \(hash.hex)")
    }

    static func reference(_ manifest: ObjectManifest, status: HTTPResponse.Status) -> Response {
        var writer = JSONWriter()
        writer.value(manifest.reference.json)
        return JSONResponse.make(writer, status: status)
    }

    /// `409 missing_chunks`: the error, with the first ``maxListed`` of the chunks the cloud
    /// lacks as `"missing"` beside it, so the gateway can send them without asking first.
    static func missingChunks(_ hashes: [ContentHash]) -> Response {
        let code = DallyError.Code.missingChunks
        var message = "the cloud lacks \(hashes.count) of the object's chunks; upload them (PUT /v1/chunks/{hash}) and send the manifest again"
        if hashes.count > maxListed { message += "; \"missing\" lists the first \(maxListed)" }
        let document = MissingChunksDocument(
            error: ErrorDocument.Body(code: code.rawValue, message: message, field: nil),
            missing: hashes.prefix(maxListed).map(\.hex))
        guard let response = try? JSONResponse.encoded(document, status: code.status) else {
            return JSONResponse.error(DallyError(code, message))
        }
        return response
    }
}
