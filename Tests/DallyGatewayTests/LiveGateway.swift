import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallyGateway
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// A real gateway serving on 127.0.0.1 at an ephemeral port, and an HTTP client to call it.
struct LiveGateway: Sendable {
    static let clientToken = "test-client-token-0123456789"
    static let readerToken = "test-reader-token-0123456789"
    static let adminToken = "test-admin-token-0123456789"

    /// A configuration with tables `orders` and `notes`, a read-write client, a client that may
    /// only read `orders`, and the admin token.
    static func config(dataDirectory: String = temporaryDirectory(), extra: String = "") throws -> GatewayConfig {
        let system = SystemConfig(
            tables: [
                .init("orders", columns: ["customer TEXT", "total REAL", "paid BOOLEAN", "items JSON", "qty INTEGER"]),
                .init("notes", columns: ["body TEXT"]),
            ],
            gateways: [],
            clients: [
                .init(name: "app", token: clientToken),
                .init(name: "reader", token: readerToken, read: ["orders"], write: nil),
            ],
            cloudAdminToken: "", gatewayAdminToken: adminToken)
        return try system.gateway(
            "", dataDirectory: dataDirectory,
            extra: """
                [limits]
                max_body_bytes = 2048
                max_rows_per_batch = 50
                max_page_rows = 20
                \(extra)
                """)
    }

    static func temporaryDirectory() -> String {
        ScratchSpace.path("dally-gateway-tests-")
    }

    let hub: ChangeHub
    let port: Int
    let http: HTTPClient

    /// Starts a gateway for `config`, runs `body` against it, then stops it gracefully and
    /// closes its replica.
    static func run<C: Clock, T: Sendable>(
        _ config: GatewayConfig, clock: C = ContinuousClock(), now: (@Sendable () -> Int64)? = nil,
        _ body: @Sendable (LiveGateway) async throws -> T
    ) async throws -> T where C.Duration == Duration {
        let gateway =
            if let now {
                try Gateway(config: config, logger: Logger(label: "test"), clock: clock, now: now)
            } else {
                try Gateway(config: config, logger: Logger(label: "test"), clock: clock)
            }
        let runner = ServiceRunner()
        var httpConfiguration = HTTPClient.Configuration()
        httpConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 400
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration)
        do {
            try await runner.start { report in [gateway.application(port: 0, onServerRunning: report), gateway.hub] }
            let result = try await body(LiveGateway(hub: gateway.hub, port: runner.port, http: http))
            try await runner.stop()
            try await http.shutdown()
            try gateway.close()
            return result
        } catch {
            try? await runner.stop()
            try? await http.shutdown()
            try? gateway.close()
            throw error
        }
    }

    struct Reply: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: String
        var json: JSONValue { (try? JSONParser.parse(body)) ?? .null }
        var errorCode: String? {
            guard case .string(let code)? = json["error"]?["code"] else { return nil }
            return code
        }
    }

    /// Sends a request and collects the whole answer.
    func send(
        _ method: HTTPMethod, _ path: String, token: String? = clientToken, body: String? = nil,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        try await send(method, path, token: token, bytes: body.map { Array($0.utf8) }, headers: headers)
    }

    /// ``send(_:_:token:body:headers:)`` with a body of bytes (a compressed one, say).
    func send(
        _ method: HTTPMethod, _ path: String, token: String? = clientToken, bytes: [UInt8]?,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let bytes { request.body = .bytes(ByteBuffer(bytes: bytes)) }
        let response = try await http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// The admin `/stats` document.
    func stats() async throws -> JSONValue {
        try await send(.GET, "/stats", token: Self.adminToken).json
    }
}

extension JSONValue {
    var int: Int64? { if case .int(let i) = self { i } else { nil } }
    var string: String? { if case .string(let s) = self { s } else { nil } }
    var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
}
