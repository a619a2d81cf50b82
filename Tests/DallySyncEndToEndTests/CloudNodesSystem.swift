import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallySync
import DallyTestSupport
import Foundation
import NIOCore
import NIOHTTP1

/// Two `dally cloud` processes over one PostgreSQL database and three `dally gateway`
/// processes that list both nodes in `[cloud] url`: the deployment several cloud nodes make.
final class CloudNodesSystem: @unchecked Sendable {
    static let gatewayIDs = ["gw-a", "gw-b", "gw-c"]
    static let clientToken = "test-client-token-0123456789"

    let cluster: PostgresCluster
    let database: PostgresSettings
    let root = ScratchSpace.path("dally-nodes-tests-")
    let config: SystemConfig
    let http: HTTPClient
    private(set) var nodes: [GatewayProcess] = []
    private(set) var gateways: [String: GatewayProcess] = [:]

    init(cluster: PostgresCluster) throws {
        self.cluster = cluster
        database = try cluster.createDatabase()
        var config = SystemConfig(
            tables: [.init("orders", columns: ["customer TEXT", "total REAL"], conflict: "last_writer_wins")],
            gateways: Self.gatewayIDs.map { .init(id: $0, secret: "secret-of-\($0)-0123456789") },
            clients: [.init(name: "app", token: Self.clientToken)],
            cloudAdminToken: "test-cloud-admin-0123456789", gatewayAdminToken: "test-gateway-admin-0123456789")
        // The harness finds a process's port in its "listening" line, logged at info.
        config.logLevel = "info"
        self.config = config
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        http = HTTPClient(eventLoopGroupProvider: .singleton)
    }

    /// Starts the two cloud nodes, then the gateways pointing at both.
    func start() throws {
        let store = """
            [store]
            backend = "postgresql"
            url = "postgres://\(database.username)@\(database.host):\(database.port)/\(database.database)"
            pool_size = 4
            """
        for n in 0..<2 {
            let path = "\(root)/cloud-\(n).toml"
            try config.cloudTOML(dataDirectory: "\(root)/cloud-\(n)", extra: store)
                .write(toFile: path, atomically: true, encoding: .utf8)
            nodes.append(try GatewayProcess(config: path, command: "cloud"))
        }
        for id in Self.gatewayIDs {
            let path = "\(root)/\(id).toml"
            var link = SystemConfig.CloudLink(url: nodeURL(0), notifyWait: "10s", retryMin: "50ms", retryMax: "500ms")
            link.standbyURLs = [nodeURL(1)]
            try config.gatewayTOML(id, dataDirectory: "\(root)/\(id)", link: link)
                .write(toFile: path, atomically: true, encoding: .utf8)
            gateways[id] = try GatewayProcess(config: path)
        }
    }

    func nodeURL(_ n: Int) -> String { "http://127.0.0.1:\(nodes[n].port)" }

    /// Stops every process still running and the HTTP client.
    func shutdown() async throws {
        let running = (nodes + gateways.values).filter(\.process.isRunning)
        // Waiting for exits blocks: off the cooperative pool.
        try await offPool { for process in running { _ = process.terminate() } }
        try await http.shutdown()
    }

    /// Saves `count` new rows `<prefix>-<i>` on gateway `id`.
    func write(_ id: String, prefix: String, count: Int) async throws {
        let rows = (0..<count).map { #"{"id":"\#(prefix)-\#($0)","values":{"customer":"\#(id)","total":\#($0)}}"# }
        let reply = try await call(id, .POST, "/v1/tables/orders/batch", #"{"created":[\#(rows.joined(separator: ","))]}"#)
        guard reply.json["saved"]?.array?.count == count else {
            throw TestFailure("gateway \(id) did not save the rows: \(reply.status) \(reply.body)")
        }
    }

    /// Asks gateway `id` to sync now; the answer's status (an unreachable cloud is not an error here).
    @discardableResult
    func sync(_ id: String) async -> Int {
        (try? await call(id, .POST, "/v1/tables/orders/sync", nil).status) ?? 0
    }

    /// Rows gateway `id` has not had acknowledged yet: waiting or in flight.
    func unacknowledged(_ id: String) async throws -> Int64 {
        let stats = try await call(id, .GET, "/stats", nil, token: config.gatewayAdminToken).json["tables"]?["orders"]
        return (stats?["outbox_pending"]?.int ?? 0) + (stats?["outbox_in_flight"]?.int ?? 0)
    }

    /// The ids of the live rows gateway `id` holds.
    func rowIDs(_ id: String) async throws -> Set<String> {
        var ids: Set<String> = []
        var since: Int64 = 0
        while true {
            let reply = try await call(id, .GET, "/v1/tables/orders/rows?since=\(since)&limit=1000", nil)
            for row in reply.json["rows"]?.array ?? [] { if let rowID = row["id"]?.string { ids.insert(rowID) } }
            guard reply.json["more"]?.bool == true, let next = reply.json["next_since"]?.int else { return ids }
            since = next
        }
    }

    /// The database's rows: id → version, read with psql.
    func databaseRows() throws -> [String: Int64] {
        let text = try cluster.psql("SELECT id, version FROM t_orders", database: database.database)
        var rows: [String: Int64] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "|")
            if parts.count == 2, let version = Int64(parts[1]) { rows[String(parts[0])] = version }
        }
        return rows
    }

    /// Posts `batch` to cloud node `n` directly, as its gateway.
    func post(_ batch: BatchRequest, toNode n: Int) async throws -> SyncSystem.Reply {
        var request = HTTPClientRequest(url: nodeURL(n) + "/v1/batches")
        request.method = .POST
        let credentials = "\(batch.gateway):\(config.secret(of: batch.gateway))"
        request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: batch.encode()))
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return SyncSystem.Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// `GET path` of cloud node `n`, without credentials (`/healthz`, `/readyz`) or as `gateway`.
    func get(_ path: String, fromNode n: Int, as gateway: String? = nil) async throws -> SyncSystem.Reply {
        var request = HTTPClientRequest(url: nodeURL(n) + path)
        if let gateway {
            let credentials = "\(gateway):\(config.secret(of: gateway))"
            request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return SyncSystem.Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    func call(_ id: String, _ method: HTTPMethod, _ path: String, _ body: String?, token: String = clientToken)
        async throws -> SyncSystem.Reply
    {
        guard let gateway = gateways[id] else { throw TestFailure("no gateway \(id)") }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(gateway.port)\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return SyncSystem.Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }
}
