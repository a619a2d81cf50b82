import AsyncHTTPClient
import DallyCloud
import DallyConfig
import DallyCore
import DallyGateway
import DallyClocks
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// A real cloud and two gateways for object sync: `gw-a` reaches the cloud over two uplinks,
/// `wifi` and `lte`, each through an ``InspectingProxy`` (so what crosses each network is seen,
/// and a link can drop mid-transfer); `gw-b` reaches it directly. Both schedulers run on
/// ``ManualClock``s that tests never move, so changes travel only on a sync-now.
///
/// Tables: `photos` (rows over anything, objects over wifi only), `albums` (`atomic_sync`:
/// a row travels and appears only with its cover), `docs` (objects fetched on demand),
/// `readings` (rows over cellular only).
final class ObjectSystem: Sendable {
    let base: SyncSystem
    let clockA = ManualClock()
    let clockB = ManualClock()
    let wifi: InspectingProxy
    let lte: InspectingProxy

    /// `cloudExtra`: more of the cloud's configuration (`[objects]` limits, …).
    init(cloudExtra: String = "") {
        base = SyncSystem(config: SyncSystem.config(tables: ObjectSystem.tables), cloudExtra: cloudExtra)
        wifi = InspectingProxy(upstream: "", http: base.http)
        lte = InspectingProxy(upstream: "", http: base.http)
    }

    static let tables: [SystemConfig.Table] = [
        .init(
            "photos", columns: ["title TEXT", "image OBJECT"],
            upload: #"{ max_delay = "2m", networks = ["wifi", "cellular"] }"#, download: #"{ period = "1h" }"#,
            uploadObjects: #"{ max_delay = "1h", networks = ["wifi"] }"#, downloadObjects: #"{ period = "1h" }"#),
        .init(
            "albums", columns: ["name TEXT", "cover OBJECT"], atomicSync: true,
            upload: #"{ max_delay = "2m", networks = ["wifi", "cellular"] }"#, download: #"{ period = "1h" }"#,
            uploadObjects: #"{ max_delay = "1h", networks = ["wifi", "cellular"] }"#),
        .init(
            "docs", columns: ["title TEXT", "file OBJECT"], download: #"{ period = "1h" }"#,
            downloadObjects: "{ on_demand = true }"),
        .init("readings", columns: ["value REAL"], upload: #"{ max_delay = "1m", networks = ["cellular"] }"#),
    ]

    func gatewayConfig(_ id: String) throws -> GatewayConfig {
        let cloud = base.live.cloudURL
        let uplinks: [SystemConfig.Uplink] =
            id == "gw-a"
            ? [.init("wifi", class: "wifi", url: wifi.url), .init("lte", class: "cellular", url: lte.url)]
            : [.init("wifi", class: "wifi", url: cloud)]
        return try base.config.gateway(
            id, dataDirectory: base.live.directory(id),
            link: .init(url: cloud, notifyNetworks: [], retryMin: "1s", retryMax: "4s"), uplinks: uplinks,
            classes: ["wired", "wifi", "cellular"], extra: "[objects]\nfetch_timeout = \"20s\"")
    }

    func start() async throws {
        try await base.startCloud()
        let cloud = base.live.cloudURL
        try await wifi.start(upstream: cloud)
        try await lte.start(upstream: cloud)
        try await startGateway("gw-a")
        try await startGateway("gw-b")
    }

    func startGateway(_ id: String) async throws {
        let clock = id == "gw-a" ? clockA : clockB
        let gateway = try Gateway(
            config: try gatewayConfig(id), logger: Logger(label: "test"), clock: clock, now: clock.wallMillis)
        try await base.live.startGateway(id, gateway)
    }

    func stopGateway(_ id: String) async throws {
        try await base.stopGateway(id)
    }

    func shutdown() async {
        for id in base.live.gatewayIDs { try? await stopGateway(id) }
        try? await base.stopCloud()
        try? await wifi.server.stop()
        try? await lte.server.stop()
        try? await base.shutdown()
    }

    static func run(cloudExtra: String = "", _ body: (ObjectSystem) async throws -> Void) async throws {
        let system = ObjectSystem(cloudExtra: cloudExtra)
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

    func url(_ id: String, _ path: String) -> String { "http://127.0.0.1:\(base.live.port(of: id))\(path)" }

    func call(
        _ id: String, _ method: HTTPMethod, _ path: String, body: String? = nil, token: String = SyncSystem.clientToken
    ) async throws -> SyncSystem.Reply {
        var request = HTTPClientRequest(url: url(id, path))
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await base.http.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return SyncSystem.Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// Streams `object` into a row's OBJECT column on gateway `id`; the reply.
    func putObject(_ id: String, table: String, row: String, column: String, _ object: TestObject) async throws
        -> SyncSystem.Reply
    {
        var request = HTTPClientRequest(url: url(id, "/v1/tables/\(table)/rows/\(row)/objects/\(column)"))
        request.method = .PUT
        request.headers.add(name: "Authorization", value: "Bearer \(SyncSystem.clientToken)")
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .stream(object.pieces(), length: .known(Int64(object.size)))
        let response = try await base.http.execute(request, timeout: .seconds(600))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return SyncSystem.Reply(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// Reads a row's object from gateway `id` as a stream: the status, and the SHA-256 and
    /// length of what arrived (never the bytes: they may be hundreds of megabytes).
    func readObject(_ id: String, table: String, row: String, column: String) async throws
        -> (status: Int, digest: StreamDigest, body: String)
    {
        var request = HTTPClientRequest(url: url(id, "/v1/tables/\(table)/rows/\(row)/objects/\(column)"))
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer \(SyncSystem.clientToken)")
        let response = try await base.http.execute(request, timeout: .seconds(600))
        var digest = StreamDigest()
        var text = ""
        for try await piece in response.body {
            if response.status == .ok { digest.update(piece) } else { text += String(buffer: piece) }
        }
        return (Int(response.status.code), digest, text)
    }

    func sync(_ id: String, table: String) async throws -> SyncSystem.Reply {
        try await call(id, .POST, "/v1/tables/\(table)/sync")
    }

    func setUplink(_ id: String, _ name: String, _ availability: String) async throws {
        try await base.setUplink(id, name, availability)
    }

    func stats(_ id: String) async throws -> JSONValue {
        try await call(id, .GET, "/stats", token: SyncSystem.gatewayAdmin).json
    }

    func syncCounter(_ id: String, _ name: String) async throws -> Int64 {
        try await stats(id)["sync"]?[name]?.int ?? -1
    }
}
