import DallyConfig
import DallyCore
import DallyHTTP
import DallyObjects
import Hummingbird

/// Who is calling, as established by the bearer token.
enum Principal: Sendable {
    case client(GatewayConfig.ClientToken)
    case admin
}

/// Checks bearer tokens against the configuration.
///
/// Tokens are found by their SHA-256, not their text: comparing a guess with a token byte by
/// byte stops at the first difference, so its time tells how much of the token a guess got
/// right; a digest's matching prefix tells nothing about the token.
struct Authorizer: Sendable {
    private let clients: [ContentHash: GatewayConfig.ClientToken]
    private let adminToken: ContentHash
    /// Each scoped token's scopes, typed once against their tables: by token, then table.
    private let scopes: [String: [String: TypedScope?]]

    init(config: GatewayConfig) {
        clients = Dictionary(uniqueKeysWithValues: config.clients.map { (ContentHash.of(Array($0.token.utf8)), $0) })
        adminToken = ContentHash.of(Array(config.adminToken.utf8))
        var scopes: [String: [String: TypedScope?]] = [:]
        for client in config.clients {
            for (table, scope) in client.scopes {
                // The configuration checked every scope against its table already; should one
                // not type all the same, the token gets nothing of the table (fail closed).
                let schema = config.tables.first { $0.name == table }
                scopes[client.token, default: [:]][table] = schema.flatMap { try? scope.validated(against: $0) }
            }
        }
        self.scopes = scopes
    }

    /// The scope the caller's token is pinned to on `table`, nil when it reads the whole table.
    func scope(of request: Request, table: String) throws(DallyError) -> TypedScope? {
        guard case .client(let client) = try principal(of: request) else { return nil }
        switch scopes[client.token]?[table] {
        case nil: return nil
        case .some(let typed?): return typed
        case .some(nil):
            throw DallyError(.forbidden, "token '\(client.name)' has a scope on '\(table)' that does not fit the table; fix the config")
        }
    }

    /// The caller behind `request`'s `Authorization: Bearer …` header.
    ///
    /// - Throws: `unauthorized` when the header is missing or names no configured token.
    func principal(of request: Request) throws(DallyError) -> Principal {
        guard let header = request.headers[.authorization],
            let credentials = AuthorizationHeader.credentials(header, scheme: "Bearer")
        else {
            throw DallyError(.unauthorized, "missing bearer token: send 'Authorization: Bearer <token>'")
        }
        let token = ContentHash.of(Array(credentials.utf8))
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

    /// Whether the caller's token is pinned to a scope on `table` (or has one that does not fit).
    func isScoped(_ request: Request, table: String) -> Bool {
        do {
            return try scope(of: request, table: table) != nil
        } catch {
            return true
        }
    }

    /// Refuses a token pinned to a scope on `table`, for what only a token that sees the whole
    /// table may do (the conflict list and its resolutions hold rows of every scope).
    func requireWholeTable(_ request: Request, table: String) throws(DallyError) {
        guard isScoped(request, table: table) else { return }
        throw DallyError(
            .forbidden,
            "this token is pinned to a scope on '\(table)'; conflicts are seen and resolved with a token that reads the whole table",
            field: "table")
    }

    /// Requires the admin token.
    func requireAdmin(_ request: Request) throws(DallyError) {
        guard case .admin = try principal(of: request) else {
            throw DallyError(.forbidden, "this endpoint needs the admin token")
        }
    }
}
