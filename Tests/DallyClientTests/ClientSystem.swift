import DallyClient
import DallyConfig
import DallyGateway
import DallyTestSupport
import Foundation
import Logging

/// Real gateways (and a cloud, when sync is involved) on 127.0.0.1 through ``LiveSystem``, and
/// ``DallyClient``s talking to them.
struct ClientSystem: Sendable {
    static let clientToken = "test-client-token-0123456789"
    static let readerToken = "test-reader-token-0123456789"
    /// Reads and writes only the orders of customer Ada.
    static let scopedToken = "test-scoped-token-0123456789"
    static let adminToken = "test-gateway-admin-0123456789"

    static let tables: [SystemConfig.Table] = [
        .init("orders", columns: ["customer TEXT", "total REAL", "paid BOOLEAN", "items JSON", "qty INTEGER"]),
        .init("notes", columns: ["body TEXT"], conflict: "server_wins"),
        .init("docs", columns: ["text TEXT", "rev INTEGER"], conflict: "manual"),
        .init("photos", columns: ["caption TEXT", "image OBJECT"]),
    ]

    /// Small limits, so that the tests reach them; objects up to `maxObjectBytes`.
    static func limits(maxObjectBytes: Int) -> String {
        """
        [limits]
        max_body_bytes = 4096
        max_rows_per_batch = 20
        max_page_rows = 50
        [objects]
        max_bytes = \(maxObjectBytes)
        """
    }

    static let config = SystemConfig(
        tables: tables,
        gateways: ["gw-a", "gw-b"].map { SystemConfig.Credential(id: $0, secret: "secret-of-\($0)-0123456789") },
        clients: [
            .init(name: "app", token: clientToken),
            .init(name: "reader", token: readerToken, read: ["orders"], write: nil),
            .init(name: "ada", token: scopedToken, read: ["orders"], write: ["orders"], scope: #"{ orders = { customer = "Ada" } }"#),
        ],
        cloudAdminToken: "test-cloud-admin-0123456789", gatewayAdminToken: adminToken)

    let live: LiveSystem
    let withCloud: Bool
    let maxObjectBytes: Int

    /// Gateway `id`'s configuration: alone, or linked to the cloud (syncing when asked).
    func gatewayConfig(_ id: String) throws -> GatewayConfig {
        try Self.config.gateway(
            id, dataDirectory: live.directory(id),
            link: withCloud ? .init(url: live.cloudURL, notifyWait: "10s", retryMin: "50ms", retryMax: "500ms") : nil,
            extra: Self.limits(maxObjectBytes: maxObjectBytes))
    }

    /// Starts gateway `id`; with `samePort`, on the port it had (a restart).
    func startGateway(_ id: String, samePort: Bool = false) async throws {
        let gateway = try Gateway(config: try gatewayConfig(id), logger: Logger(label: "client-test"))
        try await live.startGateway(id, gateway, samePort: samePort)
    }

    func url(_ id: String) -> String { "http://127.0.0.1:\(live.port(of: id))" }

    /// A client of gateway `id` with `token`; shut down by ``run(gateways:cloud:_:)``… or the test.
    func client(_ id: String = "gw-a", token: String? = clientToken, transport: (any DallyTransport)? = nil) -> DallyClient {
        DallyClient(url: url(id), token: token, transport: transport ?? HTTPClientTransport())
    }

    /// Runs `body` with the gateways `gateways` (and a cloud first when `cloud`), then stops all.
    static func run(
        gateways: [String] = ["gw-a"], cloud: Bool = false, maxObjectBytes: Int = 1 << 30, _ body: @Sendable (ClientSystem) async throws -> Void
    ) async throws {
        let system = ClientSystem(
            live: LiveSystem(config: config, rootPrefix: "dally-client-tests-"), withCloud: cloud, maxObjectBytes: maxObjectBytes)
        do {
            if cloud { try await system.live.startCloud() }
            for id in gateways { try await system.startGateway(id) }
            try await body(system)
            try await system.live.shutdown(cloudFirst: true)
        } catch {
            try? await system.live.shutdown(cloudFirst: true)
            throw error
        }
    }

    /// Runs `body` with a client of gateway `id`, shutting the client down afterwards.
    @discardableResult
    func with<T: Sendable>(
        _ id: String = "gw-a", token: String? = clientToken, transport: (any DallyTransport)? = nil,
        _ body: (DallyClient) async throws -> T
    ) async throws -> T {
        let client = client(id, token: token, transport: transport)
        do {
            let result = try await body(client)
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}
