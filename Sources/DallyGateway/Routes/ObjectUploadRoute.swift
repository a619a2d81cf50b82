import DallyCore
import DallyHTTP
import DallyObjects
import DallyStore
import Hummingbird

/// `POST /v1/objects`: uploads an object without touching any row.
///
/// The answer, `{"hash", "size", "chunks"}`, is what a later row write names (`{"hash": …}`)
/// to commit the row and its objects together — several objects, a batch of rows, or a row
/// whose other columns change in the same write. An object no row names within
/// `objects.gc_grace` is collected.
struct ObjectUploadRoute: Sendable {
    let authorizer: Authorizer
    let store: ReplicaStore
    let receiver: ObjectReceiver

    func register(on router: Router<DallyRequestContext>) {
        router.post("/v1/objects") { request, context in try await upload(request, context) }
    }

    func upload(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        try requireWriter(request)
        _ = try QueryParameters(request, allowed: [])
        let reference = try await receiver.receive(request) { manifest in
            try await store.recordLocalObject(manifest)
        }
        var writer = JSONWriter()
        writer.value(reference.json)
        return JSONResponse.make(writer, status: .created, headers: [.eTag: "\"\(reference.hash.hex)\""])
    }

    /// An object is only worth storing for a caller that may write some table.
    private func requireWriter(_ request: Request) throws(DallyError) {
        switch try authorizer.principal(of: request) {
        case .admin:
            throw DallyError(.forbidden, "the admin token is for /stats and /metrics; use a client token to upload objects")
        case .client(let client):
            guard store.tableNames.contains(where: client.mayWrite) else {
                throw DallyError(.forbidden, "token '\(client.name)' may write no table, so it may not upload objects")
            }
        }
    }
}
