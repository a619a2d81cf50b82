import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallyGateway
import DallyTestSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Testing

/// The gateway process is killed (SIGKILL) after the cloud applied its batch but before the
/// answer arrived; restarted, it resends the same batch and everything is applied exactly once.
@Suite struct KillDuringSyncTests {
    func configFile(_ system: SyncSystem, cloudURL: String) throws -> String {
        var text = try String(contentsOfFile: system.root + "/gw-a.toml.template", encoding: .utf8)
        text = text.replacingOccurrences(of: "@CLOUD@", with: cloudURL)
        let path = system.root + "/gw-a.toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func aBatchInFlightAtKillIsAppliedExactlyOnce() async throws {
        let system = SyncSystem()
        try await system.startCloud()
        let (applied, signal) = AsyncStream<Void>.makeStream()
        let (release, releaseAll) = AsyncStream<Void>.makeStream()
        let proxy = HoldingProxy(
            upstream: "http://127.0.0.1:\(system.cloudServer.port)", http: system.http, applied: signal, release: release)
        let proxyServer = ServiceRunner()
        try await proxyServer.start { report in
            [Application(router: proxy.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                         onServerRunning: { await report($0.localAddress?.port ?? 0) }, logger: Logger(label: "proxy"))]
        }
        try FileManager.default.createDirectory(atPath: system.root, withIntermediateDirectories: true)
        let template = try Self.template(system)
        try template.write(toFile: system.root + "/gw-a.toml.template", atomically: true, encoding: .utf8)

        let first = try GatewayProcess(config: try configFile(system, cloudURL: "http://127.0.0.1:\(proxyServer.port)"))
        let rows = (0..<30).map { #"{"id":"k\#($0)","values":{"customer":"c\#($0)","total":\#($0)}}"# }
        let saved = try await call(system, Endpoint(port: first.port), .POST, "/v1/tables/orders/batch", #"{"created":[\#(rows.joined(separator: ","))]}"#)
        #expect(saved.json["saved"]?.array?.count == 30)

        // Sync; the cloud applies the batch, the proxy holds the answer; kill the gateway then.
        let hanging = Task { [self] in _ = try? await call(system, Endpoint(port: first.port), .POST, "/v1/tables/orders/sync", nil) }
        var iterator = applied.makeAsyncIterator()
        await iterator.next()
        first.kill9()
        hanging.cancel()
        releaseAll.finish()
        #expect(try await cloudVersion(system) == 30)

        // Restarted on the same data directory, against the cloud directly: the same batch goes
        // again (at start, or on this sync-now) and is answered from the cloud's record;
        // nothing is applied twice.
        var config = try GatewayConfig.load(
            path: try configFile(system, cloudURL: "http://127.0.0.1:\(system.cloudServer.port)"))
        config.server.logLevel = "error"
        let restarted = try Gateway(config: config, logger: Logger(label: "restarted"))
        let server = ServiceRunner()
        try await server.start { report in restarted.services(port: 0, onServerRunning: report) }
        let gateway = Endpoint(port: server.port)
        let synced = try await call(system, gateway, .POST, "/v1/tables/orders/sync", nil)
        #expect(synced.status == 200)
        let gatewayStats = try await call(system, gateway, .GET, "/stats", nil, token: SyncSystem.gatewayAdmin).json
        #expect(gatewayStats["sync"]?["batches_resent"]?.int == 1)
        #expect(gatewayStats["sync"]?["rows_accepted"]?.int == 30)
        #expect(gatewayStats["tables"]?["orders"]?["outbox_pending"]?.int == 0)
        #expect(try await cloudVersion(system) == 30)
        let cloudStats = try await system.cloudRequest(
            .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]).json
        #expect(cloudStats["batches"]?["replayed"]?.int == 1)
        #expect(cloudStats["tables"]?["orders"]?["live"]?.int == 30)

        let page = try await call(system, gateway, .GET, "/v1/tables/orders/rows?limit=100", nil)
        let versions = page.json["rows"]?.array?.compactMap { $0["version"]?.int } ?? []
        #expect(Set(versions) == Set(1...30))
        let again = try await call(system, gateway, .POST, "/v1/tables/orders/sync", nil)
        #expect(again.json["sent"]?.int == 0)

        try await server.stop()
        try restarted.close()
        try await proxyServer.stop()
        try await system.shutdown()
    }

    static func template(_ system: SyncSystem) throws -> String {
        var config = system.config
        config.logLevel = "info"
        return config.gatewayTOML(
            "gw-a", dataDirectory: "\(system.root)/gw-a-process",
            link: .init(url: "@CLOUD@", retryMin: "50ms", retryMax: "500ms"))
    }

    /// Where a gateway listens, in or out of process.
    struct Endpoint: Sendable {
        let port: Int
    }

    func call(
        _ system: SyncSystem, _ gateway: Endpoint, _ method: HTTPMethod, _ path: String, _ body: String?,
        token: String = SyncSystem.clientToken
    ) async throws -> SyncSystem.Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(gateway.port)\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await system.http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return SyncSystem.Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    func cloudVersion(_ system: SyncSystem) async throws -> Int64? {
        try await system.cloudRequest(
            .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]
        ).json["tables"]?["orders"]?["version"]?.int
    }
}
