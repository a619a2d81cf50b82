import DallyCore
import DallyHTTP
import DallySync
import Hummingbird

/// `GET /v1/tables`: the tables this cloud declares, with their columns' types
/// (``CloudDeclarations``, PROTOCOL.md §7.5), so that a gateway can tell a table whose
/// declaration disagrees with its own before it sends or pulls a row of it.
///
/// The document is the configuration's and does not change while the process runs: it is
/// encoded once, and compressed as the gateway accepts (a few hundred bytes for a few tables).
struct DeclarationsRoute: Sendable {
    let authenticator: GatewayAuthenticator
    let document: [UInt8]

    init(tables: [TableSchema], authenticator: GatewayAuthenticator) throws {
        self.authenticator = authenticator
        self.document = try DocumentEncoder.encode(CloudDeclarations(schemas: tables))
    }

    func register(on router: Router<DallyRequestContext>) {
        router.get("/v1/tables") { request, context in try await declarations(request, context) }
    }

    func declarations(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        _ = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        return BodyCoding.response(json: document, to: request, zstdLevel: 19)
    }
}
