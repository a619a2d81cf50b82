import DallyConfig
import DallyCore
import Hummingbird

/// Who is calling, as established by the bearer token.
enum Principal: Sendable {
    case client(GatewayConfig.ClientToken)
    case admin
}

/// Checks bearer tokens against the configuration.
struct Authorizer: Sendable {
    private let clients: [String: GatewayConfig.ClientToken]
    private let adminToken: String

    init(config: GatewayConfig) {
        clients = Dictionary(uniqueKeysWithValues: config.clients.map { ($0.token, $0) })
        adminToken = config.adminToken
    }

    /// The caller behind `request`'s `Authorization: Bearer …` header.
    ///
    /// - Throws: `unauthorized` when the header is missing or names no configured token.
    func principal(of request: Request) throws(DallyError) -> Principal {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw DallyError(.unauthorized, "missing bearer token: send 'Authorization: Bearer <token>'")
        }
        let token = String(header.dropFirst("Bearer ".count))
        if let client = clients[token] { return .client(client) }
        if token == adminToken { return .admin }
        throw DallyError(.unauthorized, "unknown token")
    }

    /// Requires a client token that may read (or write) `table`.
    func requireTable(_ request: Request, table: String, write: Bool) throws(DallyError) {
        switch try principal(of: request) {
        case .admin:
            throw DallyError(.forbidden, "the admin token is for /stats and /metrics; use a client token for tables")
        case .client(let client):
            let allowed = write ? client.mayWrite(table) : client.mayRead(table)
            guard allowed else {
                throw DallyError(
                    .forbidden, "token '\(client.name)' may not \(write ? "write" : "read") table '\(table)'",
                    field: "table")
            }
        }
    }

    /// Requires the admin token.
    func requireAdmin(_ request: Request) throws(DallyError) {
        guard case .admin = try principal(of: request) else {
            throw DallyError(.forbidden, "this endpoint needs the admin token")
        }
    }
}
