import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallyGateway
import DallyClocks
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// A real cloud and one gateway with two uplinks to it, `wifi` and `lte`, each through its own
/// loopback port (an ``InspectingProxy``) so that what crosses each network is seen from
/// outside the gateway. The gateway's scheduler runs on a ``ManualClock``: time moves only when
/// a test says, so deadlines are tested without waiting for them.
///
/// Policies, after the Simba paper's photo example: `orders` (think photo metadata) may wait
/// 2 minutes and use any network; `notes` (think the photos) may wait 10 minutes and use wifi
/// only, both ways; `tasks` is local only; `docs` keeps the defaults. Every download period is
/// an hour, so pulls do not clutter the traces.
final class UplinkSystem: Sendable {
    let base = SyncSystem()
    let clock = ManualClock()
    let wifi: InspectingProxy
    let lte: InspectingProxy
    let notifyNetworks: [String]
    /// Probe intervals by uplink name (`probe_interval`, `down_probe_interval`); probes are
    /// off for an uplink not named here.
    let probes: [String: (every: String, down: String?)]
    /// `retry_min` and `retry_max`.
    let retry: (min: String, max: String)

    /// The moment the clock started, in milliseconds since 1970.
    var t0: Int64 { clock.epochMillis }

    /// The proxies' own client, which fails a request at once when the cloud refuses the
    /// connection, as a router would (the test client waits for the cloud to come back).
    private let proxyHTTP: HTTPClient

    init(
        notifyNetworks: [String] = [], probes: [String: (every: String, down: String?)] = [:],
        retry: (min: String, max: String) = ("1s", "4s")
    ) {
        self.notifyNetworks = notifyNetworks
        self.probes = probes
        self.retry = retry
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        proxyHTTP = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        wifi = InspectingProxy(upstream: "", http: proxyHTTP)
        lte = InspectingProxy(upstream: "", http: proxyHTTP)
    }

    /// The gateway's tables: the cloud's four, with the policies above.
    static let policies: [SystemConfig.Table] = [
        .init(
            "orders", columns: ["customer TEXT", "total REAL", "paid BOOLEAN", "items JSON"],
            upload: #"{ max_delay = "2m", networks = ["wifi", "cellular"] }"#, download: #"{ period = "1h" }"#),
        .init(
            "notes", columns: ["body TEXT"], upload: #"{ max_delay = "10m", networks = ["wifi"] }"#,
            download: #"{ period = "1h", networks = ["wifi"] }"#),
        .init("tasks", columns: ["title TEXT", "done BOOLEAN"], localOnly: true),
        .init("docs", columns: ["text TEXT", "rev INTEGER"], download: #"{ period = "1h" }"#),
    ]

    func gatewayConfig() throws -> GatewayConfig {
        var uplinks: [SystemConfig.Uplink] = [
            .init("wifi", class: "wifi", url: wifi.url), .init("lte", class: "cellular", url: lte.url),
        ]
        for i in uplinks.indices {
            guard let probe = probes[uplinks[i].name] else { continue }
            uplinks[i].probeInterval = probe.every
            uplinks[i].downProbeInterval = probe.down
        }
        return try base.config.gateway(
            "gw-a", dataDirectory: base.live.directory("gw-a"),
            link: .init(
                url: wifi.url, notifyWait: "10s", notifyNetworks: notifyNetworks, retryMin: retry.min, retryMax: retry.max),
            uplinks: uplinks, classes: ["wired", "wifi", "cellular"], tables: Self.policies)
    }

    func start() async throws {
        try await base.startCloud()
        let cloud = "http://127.0.0.1:\(base.cloudServer.port)"
        try await wifi.start(upstream: cloud)
        try await lte.start(upstream: cloud)
        try await startGateway()
    }

    func startGateway() async throws {
        let gateway = try Gateway(
            config: try gatewayConfig(), logger: Logger(label: "test"), clock: clock, now: clock.wallMillis)
        try await base.live.startGateway("gw-a", gateway)
    }

    func stopGateway() async throws {
        try await base.stopGateway("gw-a")
    }

    /// Stops the gateway, then the cloud (which answers a notify poll the proxies still hold),
    /// then the proxies.
    func shutdown() async {
        try? await stopGateway()
        try? await base.stopCloud()
        try? await wifi.server.stop()
        try? await lte.server.stop()
        try? await proxyHTTP.shutdown()
        try? await base.shutdown()
    }

    static func run(
        notifyNetworks: [String] = [], probes: [String: (every: String, down: String?)] = [:],
        retry: (min: String, max: String) = ("1s", "4s"), _ body: (UplinkSystem) async throws -> Void
    ) async throws {
        let system = UplinkSystem(notifyNetworks: notifyNetworks, probes: probes, retry: retry)
        do {
            try await system.start()
            try await body(system)
            await system.shutdown()
        } catch {
            await system.shutdown()
            throw error
        }
    }

    // MARK: - Calls

    func call(
        _ method: HTTPMethod, _ path: String, body: String? = nil, token: String = SyncSystem.clientToken
    ) async throws -> SyncSystem.Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(base.live.port(of: "gw-a"))\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await base.http.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return SyncSystem.Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    func put(_ table: String, _ id: String, _ values: String) async throws {
        let reply = try await call(.PUT, "/v1/tables/\(table)/rows/\(id)", body: #"{"values":\#(values)}"#)
        guard reply.status == 200 else { throw TestFailure("PUT \(table)/\(id): \(reply.status) \(reply.body)") }
    }

    func setUplink(_ name: String, _ availability: String) async throws {
        let reply = try await call(
            .PUT, "/v1/admin/uplinks/\(name)", body: #"{"availability":"\#(availability)"}"#,
            token: SyncSystem.gatewayAdmin)
        guard reply.status == 200 else { throw TestFailure("PUT uplink \(name): \(reply.status) \(reply.body)") }
    }

    func stats() async throws -> JSONValue {
        try await call(.GET, "/stats", token: SyncSystem.gatewayAdmin).json
    }

    func uplink(_ name: String, in stats: JSONValue) -> JSONValue? {
        stats["uplinks"]?.array?.first { $0["name"]?.string == name }
    }

    /// Waits until the scheduler is idle and `condition` holds of `/stats`; the stats then.
    /// Polls real time only to notice the state; every decision runs on the manual clock.
    @discardableResult
    func settle(_ what: String, where condition: (JSONValue) -> Bool = { _ in true }) async throws -> JSONValue {
        for _ in 0..<1_000 {
            let stats = try await stats()
            if stats["sync"]?["idle"]?.bool == true, condition(stats) { return stats }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("the scheduler did not settle: \(what); last stats: \(try await stats())")
    }

    /// Moves the gateway's time forward.
    func advance(by duration: Duration) { clock.advance(by: duration) }
}
