import DallyCompression
import DallyCore
import DallyHTTP
import DallyObjects
import DallySync
import Foundation
import Hummingbird

/// `POST /v1/batches`: a gateway's changes, applied in one transaction, answered per row with
/// a downstream page piggybacked (see `docs/PROTOCOL.md`). A body may come in resumable frames
/// (§6.1): the batch is applied once the last one completes it.
struct BatchesRoute: Sendable {
    let store: any CloudStore
    let authenticator: GatewayAuthenticator
    let limits: Limits
    let counters: CloudCounters
    let shelf: DictionaryShelf
    let compaction: TombstoneCompaction
    /// Batch bodies sent in frames, or cut, kept from one request to the next (§6.1).
    let frames: UploadFrames
    /// The wall clock, ms since 1970.
    let now: @Sendable () -> Int64
    /// How far past `now` a change's `updated_at` may be, in ms (`[batches] max_clock_ahead`).
    let maxClockAheadMs: Int64
    let clocks: WriterClockWatch

    struct Limits: Sendable {
        var maxBodyBytes: Int
        var maxDecompressedBytes: Int
        var maxRowsPerBatch: Int
        var maxPageRows: Int
    }

    func register(on router: Router<DallyRequestContext>) {
        router.post("/v1/batches") { request, context in try await handle(request, context) }
        router.get("/v1/batches/:id") { request, context in try await stored(request, context) }
    }

    /// `GET /v1/batches/{id}`: whether the cloud applied the gateway's batch `id`, asked before
    /// resending a cut batch's body (PROTOCOL.md §6): `200 {"batch_id","fingerprint","results"}`
    /// with the answer's results as stored, or `404 not_found`.
    func stored(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let id = context.parameters.decoded("id")
        // No batch was taken under another id, and the store is not asked for one it cannot hold
        // (PostgreSQL refuses a text with U+0000, `%00` in the path, with an error of its own).
        guard BatchRequest.isValidToken(id) else {
            throw DallyError(.badRequest, "'\(id.prefix(80))' is not a batch id: 1 to 64 of A-Z a-z 0-9 - _", field: "id")
        }
        guard let stored = try await store.storedResults(gateway: gateway, batchID: id) else {
            throw DallyError(.notFound, "the cloud holds no answer to batch '\(id.prefix(80))' of gateway '\(gateway)'")
        }
        let results = try BodyCoding.json(stored.results)
        var writer = JSONWriter()
        writer.value(
            .object([
                JSONMember("batch_id", .string(id)),
                JSONMember("fingerprint", .string(String(stored.fingerprint, radix: 16))),
                JSONMember("results", results),
            ]))
        return BodyCoding.response(json: writer.bytes, to: request)
    }

    func handle(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let shelf = self.shelf
        let dictionaries: @Sendable (Set<UInt32>) async throws -> [UInt32: ZstdDictionary] = { ids in
            try await shelf.dictionaries(ids, of: gateway)
        }
        let body: [UInt8]
        var bodyBytes = request.headers[.contentLength].flatMap(Int.init)
        if try UploadFrames.isFramed(request) {
            let hash = try UploadFrames.bodyHash(request)
            switch try await frames.receive(request, hash: hash, maxBytes: limits.maxBodyBytes) {
            case .partial(let offset, let length): return UploadFrames.partialAnswer(offset: offset, length: length)
            case .offsetRefused(let held): return UploadFrames.offsetAnswer(held: held)
            case .whole(let sent, let coding):
                guard ContentHash.of(sent) == hash else {
                    throw DallyError(
                        .hashMismatch, "the batch body as sent does not hash to \(UploadFrames.hashHeader); send it again",
                        field: UploadFrames.hashHeader)
                }
                bodyBytes = sent.count
                body = try await BodyCoding.decode(
                    ByteBuffer(bytes: sent), coding: coding, maxDecompressedBytes: limits.maxDecompressedBytes,
                    dictionaries: dictionaries)
            }
        } else {
            body = try await BodyCoding.body(
                of: request, maxBytes: limits.maxBodyBytes, maxDecompressedBytes: limits.maxDecompressedBytes,
                dictionaries: dictionaries)
        }
        var batch = try BatchRequest.decode(body: body, maxRows: limits.maxRowsPerBatch)
        guard batch.gateway == gateway else {
            throw DallyError(
                .forbidden, "the batch names gateway '\(batch.gateway)' but the credentials are for '\(gateway)'",
                field: "gateway")
        }
        let arrival = now()
        let ahead = batch.limitWriterClocks(to: arrival + maxClockAheadMs, arrival: arrival)
        counters.recordClockAhead(ahead, from: gateway)
        clocks.saw(ahead, from: gateway, now: arrival)
        batch.regressed = try await compaction.regressed(batch)
        let answer = try await store.apply(
            batch, fingerprint: Fingerprint.of(body), pageRows: limits.maxPageRows,
            now: arrival)
        compaction.saw(gateway: gateway, since: batch.since, resyncing: batch.resyncing)
        counters.record(answer, bodyBytes: bodyBytes)
        return BodyCoding.response(json: answer.encode(), to: request)
    }
}
