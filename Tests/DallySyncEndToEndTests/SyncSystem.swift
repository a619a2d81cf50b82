import AsyncHTTPClient
import DallyCloud
import DallyConfig
import DallyCore
import DallyGateway
import DallyStore
import DallySync
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// A real cloud and two real gateways on 127.0.0.1, each on an ephemeral port with its own
/// temporary data directory, and an HTTP client to call them.
///
/// The gateways sync only when asked (`sync_interval` is an hour), so every test decides when
/// batches go; the notify long-poll still runs, as in production.
final class SyncSystem: Sendable {
    static let clientToken = "test-client-token-0123456789"
    static let cloudAdmin = "test-cloud-admin-0123456789"
    static let gatewayAdmin = "test-gateway-admin-0123456789"
    static let secrets = ["gw-a": "secret-of-gateway-a-0123", "gw-b": "secret-of-gateway-b-0123"]

    /// One table per conflict rule.
    static let tables: [SystemConfig.Table] = [
        .init(
            "orders", columns: ["customer TEXT", "total REAL", "paid BOOLEAN", "items JSON"],
            conflict: "last_writer_wins"),
        .init("notes", columns: ["body TEXT"], conflict: "server_wins"),
        .init("tasks", columns: ["title TEXT", "done BOOLEAN"], conflict: "client_wins"),
        .init("docs", columns: ["text TEXT", "rev INTEGER"], conflict: "manual"),
    ]

    /// The cloud's limits: small, so that the tests reach them.
    static let cloudLimits = """
        [limits]
        max_body_bytes = 65536
        max_decompressed_bytes = 262144
        max_rows_per_batch = 500
        max_page_rows = 50
        """

    /// `tables` on a cloud that knows `gw-a` and `gw-b`, and gateways with the client `app`.
    static func config(tables: [SystemConfig.Table] = tables) -> SystemConfig {
        SystemConfig(
            tables: tables,
            gateways: ["gw-a", "gw-b"].map { SystemConfig.Credential(id: $0, secret: secrets[$0] ?? "") },
            clients: [SystemConfig.Client(name: "app", token: clientToken)],
            cloudAdminToken: cloudAdmin, gatewayAdminToken: gatewayAdmin)
    }

    let live: LiveSystem
    let cloudExtra: String
    let http: HTTPClient
    /// Per gateway, tables declared instead of the system's (a scope of its own, …).
    let gatewayTables: Mutex<[String: [SystemConfig.Table]]>
    /// Proxies a test put between a gateway and the cloud, stopped after the cloud (which
    /// answers the notify polls they hold).
    let proxies = Mutex<[InspectingProxy]>([])

    var root: String { live.root }
    var cloudServer: ServiceRunner { live.cloudRunner }
    var cloud: Cloud<ContinuousClock>? { live.cloud }
    var config: SystemConfig { live.config }

    init(
        config: SystemConfig = SyncSystem.config(), cloudExtra: String = SyncSystem.cloudLimits,
        gatewayTables: [String: [SystemConfig.Table]] = [:]
    ) {
        live = LiveSystem(config: config, rootPrefix: "dally-sync-tests-")
        self.cloudExtra = cloudExtra
        self.gatewayTables = Mutex(gatewayTables)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Gateway `id` reaching the cloud directly, syncing only when asked (and on notify).
    ///
    /// Its uplink probes only once a minute, even while the cloud is down: tests stop and
    /// restart the cloud and sync at once, which a probe that had found the cloud down would
    /// hold until the next one (``ProbeEndToEndTests`` test the probe).
    func gatewayConfig(_ id: String) throws -> GatewayConfig {
        var config = try config.gateway(
            id, dataDirectory: live.directory(id),
            link: .init(url: live.cloudURL, notifyWait: "10s", retryMin: "50ms", retryMax: "500ms"),
            tables: gatewayTables.withLock { $0[id] })
        for i in config.uplinks.indices { config.uplinks[i].downProbeInterval = nil }
        return config
    }

    /// Starts (or restarts, on the same port) the cloud.
    func startCloud() async throws {
        try await live.startCloud(extra: cloudExtra)
    }

    func stopCloud() async throws {
        try await live.stopCloud()
    }

    func startGateway(_ id: String) async throws {
        try await live.startGateway(id, try gatewayConfig(id))
    }

    func stopGateway(_ id: String) async throws {
        try await live.stopGateway(id)
    }

    /// `system`'s cloud and `gateways` running for `body`, then stopped; `adjust` changes a
    /// gateway's configuration before it starts (a shorter timeout, a longer notify wait, …).
    static func run(
        _ system: SyncSystem = SyncSystem(), gateways: [String] = ["gw-a", "gw-b"],
        adjust: (String, inout GatewayConfig) -> Void = { _, _ in }, _ body: (SyncSystem) async throws -> Void
    ) async throws {
        do {
            try await system.startCloud()
            for id in gateways {
                var config = try system.gatewayConfig(id)
                adjust(id, &config)
                try await system.live.startGateway(id, config)
            }
            try await body(system)
            try await system.shutdown()
        } catch {
            try? await system.shutdown()
            throw error
        }
    }

    func shutdown() async throws {
        do {
            try await live.shutdown()
        } catch {
            await stopProxies()
            try? await http.shutdown()
            throw error
        }
        await stopProxies()
        try await http.shutdown()
    }

    private func stopProxies() async {
        for proxy in proxies.withLock({ $0 }) { try? await proxy.server.stop() }
    }

    // MARK: - Calls

    struct Reply: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: String
        var json: JSONValue { (try? JSONParser.parse(body)) ?? .null }
        var errorCode: String? { json["error"]?["code"]?.string }
    }

    /// A request to gateway `id` with the client token.
    func gateway(
        _ id: String, _ method: HTTPMethod, _ path: String, body: String? = nil, token: String = clientToken
    ) async throws -> Reply {
        let port = live.port(of: id)
        return try await send(
            method, "http://127.0.0.1:\(port)\(path)", headers: [("Authorization", "Bearer \(token)")],
            body: body.map { Array($0.utf8) })
    }

    /// Overrides uplink `name`'s availability on gateway `id` (`auto`, `available`, `unavailable`).
    func setUplink(_ id: String, _ name: String, _ availability: String) async throws {
        let reply = try await gateway(
            id, .PUT, "/v1/admin/uplinks/\(name)", body: #"{"availability":"\#(availability)"}"#, token: Self.gatewayAdmin)
        guard reply.status == 200 else { throw TestFailure("PUT uplink \(name): \(reply.status) \(reply.body)") }
    }

    /// A request to the cloud, as gateway `as` (HTTP Basic) unless `headers` say otherwise.
    func cloudRequest(
        _ method: HTTPMethod, _ path: String, as gateway: String? = "gw-a", secret: String? = nil,
        headers: [(String, String)] = [], body: [UInt8]? = nil
    ) async throws -> Reply {
        var all = headers
        if let gateway {
            let credentials = "\(gateway):\(secret ?? Self.secrets[gateway] ?? "")"
            all.append(("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()))
        }
        return try await send(method, "http://127.0.0.1:\(cloudServer.port)\(path)", headers: all, body: body)
    }

    private func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)], body: [UInt8]?) async throws
        -> Reply
    {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    // MARK: - Conveniences

    /// Sync now on gateway `id`; the answer's JSON.
    @discardableResult
    func sync(_ id: String, table: String = "orders") async throws -> Reply {
        try await gateway(id, .POST, "/v1/tables/\(table)/sync")
    }

    /// A sync-now of `table` on gateway `id` just after its cloud came back, the link said to be
    /// back first (as an operator's hook would): a gateway that started while its cloud was down
    /// may have found it down by probe, and these tests' gateways probe only every minute while
    /// the cloud is silent (their down probe is off), so the sync-now would be answered 202.
    func syncOnceTheLinkIsBack(_ id: String, table: String) async throws -> Reply {
        try await setUplink(id, "default", "available")
        let reply = try await sync(id, table: table)
        try await setUplink(id, "default", "auto")
        return reply
    }

    /// The row as gateway `id` holds it (tombstones included: a GET of a deleted row is 404, so
    /// read it from the rows feed).
    func row(_ id: String, table: String, _ rowID: String) async throws -> JSONValue? {
        let reply = try await gateway(id, .GET, "/v1/tables/\(table)/rows?include_deleted=true&limit=1000")
        return reply.json["rows"]?.array?.first { $0["id"]?.string == rowID }
    }

    /// Long-polls gateway `id`'s changes feed until `condition` holds for a change of
    /// `rowID`, and returns that change. Waits for events, never for time.
    func awaitChange(
        on id: String, table: String, _ rowID: String, where condition: (JSONValue) -> Bool = { _ in true }
    ) async throws -> JSONValue {
        var since: Int64 = 0
        for _ in 0..<50 {
            let reply = try await gateway(id, .GET, "/v1/tables/\(table)/changes?since=\(since)&wait=20")
            for change in reply.json["changes"]?.array ?? [] where change["id"]?.string == rowID && condition(change) {
                return change
            }
            guard let next = reply.json["next_since"]?.int else { break }
            since = next
        }
        throw TestFailure("no matching change of \(table)/\(rowID) reached \(id)")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension JSONValue {
    var int: Int64? { if case .int(let i) = self { i } else { nil } }
    var string: String? { if case .string(let s) = self { s } else { nil } }
    var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    var double: Double? {
        switch self {
        case .double(let d): d
        case .int(let i): Double(i)
        default: nil
        }
    }
}
