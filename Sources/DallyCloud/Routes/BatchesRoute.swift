import DallyCore
import DallyHTTP
import DallySync
import Foundation
import Hummingbird

/// `POST /v1/batches`: a gateway's changes, applied in one transaction, answered per row with
/// a downstream page piggybacked (see `docs/PROTOCOL.md`).
struct BatchesRoute: Sendable {
    let store: any CloudStore
    let authenticator: GatewayAuthenticator
    let limits: Limits
    let counters: CloudCounters
    let shelf: DictionaryShelf
    let compaction: TombstoneCompaction
    /// The wall clock, ms since 1970.
    let now: @Sendable () -> Int64

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
        let id = context.parameters.get("id") ?? ""
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
        let shelf = self.shelf
        let body = try await BodyCoding.body(
            of: request, maxBytes: limits.maxBodyBytes, maxDecompressedBytes: limits.maxDecompressedBytes,
            dictionaries: { ids in try await shelf.dictionaries(ids, of: gateway) })
        var batch = try BatchRequest.decode(try BodyCoding.json(body), maxRows: limits.maxRowsPerBatch)
        guard batch.gateway == gateway else {
            throw DallyError(
                .forbidden, "the batch names gateway '\(batch.gateway)' but the credentials are for '\(gateway)'",
                field: "gateway")
        }
        batch.regressed = try await compaction.regressed(batch)
        let answer = try await store.apply(
            batch, fingerprint: Fingerprint.of(body), pageRows: limits.maxPageRows,
            now: now())
        compaction.saw(gateway: gateway, since: batch.since, resyncing: batch.resyncing)
        counters.record(answer, bodyBytes: request.headers[.contentLength].flatMap(Int.init))
        return BodyCoding.response(json: answer.encode(), to: request)
    }
}
