import DallyCore
import DallyHTTP
import DallySync
import Hummingbird
import Logging

/// `GET /v1/tables`: the tables this cloud declares, with their columns' types
/// (``TableDeclarations``, PROTOCOL.md §7.5), so that a gateway can tell a table whose
/// declaration disagrees with its own before it sends or pulls a row of it. `POST /v1/tables`
/// answers the same, and keeps the declarations the gateway sends in its body
/// (``FleetDeclarations``): `/stats` and `/metrics` then show which sites are behind or ahead
/// of this cloud.
///
/// The document is the configuration's and does not change while the process runs: it is
/// encoded once, and compressed as the gateway accepts (a few hundred bytes for a few tables).
struct DeclarationsRoute: Sendable {
    let authenticator: GatewayAuthenticator
    let fleet: FleetDeclarations
    let limits: Limits
    let document: [UInt8]
    let now: @Sendable () -> Int64
    let logger: Logger

    struct Limits: Sendable {
        var maxBodyBytes: Int
        var maxDecompressedBytes: Int
    }

    init(
        fleet: FleetDeclarations, authenticator: GatewayAuthenticator, limits: Limits,
        now: @escaping @Sendable () -> Int64, logger: Logger
    ) throws {
        self.authenticator = authenticator
        self.fleet = fleet
        self.limits = limits
        self.now = now
        self.logger = logger
        document = try DocumentEncoder.encode(fleet.declared)
    }

    func register(on router: Router<DallyRequestContext>) {
        router.get("/v1/tables") { request, context in try await declarations(request, context) }
        router.post("/v1/tables") { request, context in try await told(request, context) }
    }

    func declarations(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        _ = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        return BodyCoding.response(json: document, to: request, zstdLevel: 19)
    }

    /// Keeps what the gateway declares, then answers as `GET` does.
    func told(_ request: Request, _ context: DallyRequestContext) async throws -> Response {
        let gateway = try await authenticator.gateway(of: request, context: context)
        _ = try QueryParameters(request, allowed: [])
        let body = try await BodyCoding.body(
            of: request, maxBytes: limits.maxBodyBytes, maxDecompressedBytes: limits.maxDecompressedBytes)
        _ = try BodyCoding.json(body)
        let theirs: TableDeclarations
        do {
            theirs = try TableDeclarations(document: body)
        } catch {
            throw DallyError(
                .badRequest,
                #"the body must be the gateway's declarations, {"tables":[{"name":…,"columns":[{"name":…,"type":…}],"scope_columns":[…]}]}: \#(Self.reason(error))"#)
        }
        let (before, differences) = try await fleet.record(ToldDeclarations(gateway: gateway, declared: theirs, toldAt: now()))
        if differences != before, !differences.isEmpty {
            let listed = differences.sorted { $0.key < $1.key }.map { table, codes in
                "\(table): " + codes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.joined(separator: ","))" }
                    .joined(separator: "; ")
            }
            let metadata: Logger.Metadata = ["gateway": "\(gateway)", "differences": "\(listed.joined(separator: " | "))"]
            // A site not yet given a column the cloud added is a rollout under way; anything
            // else holds a table at that site.
            let onlyBehind = differences.values.allSatisfy { $0.keys.allSatisfy { $0 == "columns_not_declared" } }
            logger.log(
                level: onlyBehind ? .info : .warning, "a gateway declares tables otherwise than this cloud", metadata: metadata)
        }
        return BodyCoding.response(json: document, to: request, zstdLevel: 19)
    }

    /// Where a decoding error is, in words: the path of the member and what was wrong.
    private static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            context.memberPath.isEmpty ? "the document" : context.memberPath
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)) lacks '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
