import DallyCompression
import DallyCore
import DallyHTTP
import DallySync
import Foundation
import Hummingbird

/// `/v1/dictionaries`: the compression dictionaries a gateway trained on its own traffic and
/// keeps in the cloud, so that its bodies can be compressed against them (PROTOCOL.md §8).
///
/// A dictionary belongs to the gateway that uploaded it; ids are the gateway's to choose (the
/// id inside the zstd dictionary) and need only be unique among its own.
struct DictionaryRoutes: Sendable {
    let store: any CloudStore
    let shelf: DictionaryShelf
    let authenticator: GatewayAuthenticator
    let maxDictionaries: Int
    let maxDictionaryBytes: Int
    /// The wall clock, ms since 1970.
    let now: @Sendable () -> Int64

    func register(on router: Router<DallyRequestContext>) {
        router.put("/v1/dictionaries/:id") { request, context in try await put(request, context) }
        router.get("/v1/dictionaries/:id") { request, context in try await get(request, context) }
        router.delete("/v1/dictionaries/:id") { request, context in try await delete(request, context) }
        router.get("/v1/dictionaries") { request, context in try await list(request, context) }
    }

    /// `PUT /v1/dictionaries/{id}?table=T`, the dictionary's bytes as the body: 201 when stored,
    /// 200 when the same bytes were stored before (a retried upload).
    func put(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        let id = try Self.id(context)
        let query = try QueryParameters(request, allowed: ["table"])
        guard let table = query.string("table") else {
            throw DallyError(.badQuery, "name the table the dictionary was trained on: ?table=<name>", field: "table")
        }
        guard store.schema(table) != nil else {
            throw DallyError(.unknownTable, "the cloud has no table '\(table)'", field: "table")
        }
        let bytes = try await BodyCoding.body(
            of: request, maxBytes: maxDictionaryBytes, maxDecompressedBytes: maxDictionaryBytes)
        do {
            _ = try ZstdDictionary(id: id, bytes: bytes)
        } catch {
            throw DallyError(.badDictionary, "the body is not a zstd dictionary with id \(id): \(error)")
        }
        let offer = StoredDictionary(
            gateway: gateway, id: id, table: table, bytes: bytes, createdAt: now())
        let status: HTTPResponse.Status
        switch try await store.offerDictionary(offer, limit: maxDictionaries) {
        case .stored: status = .created
        case .alreadyStored: status = .ok
        case .idTaken:
            throw DallyError(.dictionaryConflict, "dictionary \(id) is already stored with other bytes; choose another id")
        case .full(let limit):
            throw DallyError(
                .dictionaryConflict,
                "gateway '\(gateway)' keeps \(limit) dictionaries already (limits.max_dictionaries); delete one first")
        }
        return try JSONResponse.encoded(StoredDictionaryAnswer(id: id, table: table, bytes: bytes.count), status: status)
    }

    /// `GET /v1/dictionaries/{id}`: the bytes, as uploaded.
    func get(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let id = try Self.id(context)
        guard let stored = try await store.dictionary(gateway: gateway, id: id) else {
            throw DallyError(.notFound, "gateway '\(gateway)' has no dictionary \(id) in the cloud")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/octet-stream"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: stored.bytes)))
    }

    /// `DELETE /v1/dictionaries/{id}`: 204, or 404 when there is none.
    func delete(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let id = try Self.id(context)
        guard try await store.deleteDictionary(gateway: gateway, id: id) else {
            throw DallyError(.notFound, "gateway '\(gateway)' has no dictionary \(id) in the cloud")
        }
        shelf.forget(gateway: gateway, id: id)
        return Response(status: .noContent)
    }

    /// `GET /v1/dictionaries`: `{"dictionaries":[{"id","table","created_at"}]}`, oldest first.
    func list(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let listed = try await store.dictionaries(gateway: gateway).map {
            ListedDictionary(id: $0.id, table: $0.table, createdAt: $0.createdAt)
        }
        return try JSONResponse.encoded(["dictionaries": listed])
    }

    static func id(_ context: DallyRequestContext) throws(DallyError) -> UInt32 {
        let text = context.parameters.decoded("id")
        guard let id = UInt32(text), StoredDictionary.isPrivate(id) else {
            throw DallyError(
                .badRequest,
                "'\(text)' is not a dictionary id: use an integer from \(StoredDictionary.firstPrivateID) to \(StoredDictionary.lastPrivateID)",
                field: "id")
        }
        return id
    }
}
