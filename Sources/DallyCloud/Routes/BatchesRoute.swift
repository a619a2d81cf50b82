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
    }

    func handle(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        let shelf = self.shelf
        let body = try await BodyCoding.body(
            of: request, maxBytes: limits.maxBodyBytes, maxDecompressedBytes: limits.maxDecompressedBytes,
            dictionaries: { ids in try await shelf.dictionaries(ids, of: gateway) })
        let batch = try BatchRequest.decode(try BodyCoding.json(body), maxRows: limits.maxRowsPerBatch)
        guard batch.gateway == gateway else {
            throw DallyError(
                .forbidden, "the batch names gateway '\(batch.gateway)' but the credentials are for '\(gateway)'",
                field: "gateway")
        }
        let answer = try await store.apply(
            batch, fingerprint: Fingerprint.of(body), pageRows: limits.maxPageRows,
            now: now())
        counters.record(answer, bodyBytes: request.headers[.contentLength].flatMap(Int.init))
        return BodyCoding.response(json: answer.encode(), to: request)
    }
}
