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

        let firstConfig = try configFile(system, cloudURL: "http://127.0.0.1:\(proxyServer.port)")
        let first = try await offPool { try GatewayProcess(config: firstConfig) }
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
        let (restarted, server, gateway) = try await restartInProcess(
            system, cloudURL: "http://127.0.0.1:\(system.cloudServer.port)")
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

    /// The gateway applies a large answer one row per transaction (`sync_piece_rows = 1`) and
    /// is killed (SIGKILL) half-way; restarted, it resends the batch, the cloud answers from its
    /// record, and only the rows not applied yet are applied: every row ends at its version,
    /// once, and nothing acknowledged is lost.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)))
    func aGatewayKilledBetweenPiecesOfAnAnswerAppliesTheRestOnce() async throws {
        // One batch of 10,000 rows, which the cloud takes whole: the kill must land while its
        // answer is applied a row a piece, and a whole answer of them outlasts many polls of
        // `/stats` on a loaded machine (with the test cloud's 500-row batches only the last
        // answer or two were left once the cloud held every row, and a fast settle finished them
        // between polls). Rows between none and all settled then mean an answer is being
        // applied. A wake on a link not measured yet opens with a small batch
        // (`LinkModel.openingBatchRows`), whose answer may be the one: the cloud then holds
        // every row settled, not always all of them (waiting for all too let the gateway
        // finish under a loaded suite's polls).
        let system = SyncSystem(
            cloudExtra: """
                [limits]
                max_body_bytes = 4194304
                max_decompressed_bytes = 16777216
                max_rows_per_batch = 10000
                """)
        try await system.startCloud()
        let cloudURL = "http://127.0.0.1:\(system.cloudServer.port)"
        try FileManager.default.createDirectory(atPath: system.root, withIntermediateDirectories: true)
        let template = try Self.template(system, extra: "[store]\nsync_piece_rows = 1", link: ["max_batch_rows = 10000"])
        try template.write(toFile: system.root + "/gw-a.toml.template", atomically: true, encoding: .utf8)
        let firstConfig = try configFile(system, cloudURL: cloudURL)
        let first = try await offPool { try GatewayProcess(config: firstConfig) }
        let count = 10_000
        let rows = (0..<count).map { #"{"id":"p\#($0)","values":{"customer":"c\#($0)","total":\#($0)}}"# }
        let saved = try await call(
            system, Endpoint(port: first.port), .POST, "/v1/tables/orders/batch",
            #"{"created":[\#(rows.joined(separator: ","))]}"#)
        #expect(saved.json["saved"]?.array?.count == count)

        // Sync, and kill the gateway while the answer's rows are being applied.
        let syncing = Task { [self] in _ = try? await call(system, Endpoint(port: first.port), .POST, "/v1/tables/orders/sync", nil) }
        // Rows not settled yet: waiting, or in flight (an applied row leaves the outbox).
        var pending = count
        while pending == count || pending == 0 {
            let stats = try await call(system, Endpoint(port: first.port), .GET, "/stats", nil, token: SyncSystem.gatewayAdmin)
            let orders = stats.json["tables"]?["orders"]
            pending = Int((orders?["outbox_pending"]?.int ?? 0) + (orders?["outbox_in_flight"]?.int ?? 0))
            if pending == 0 { break }
        }
        first.kill9()
        syncing.cancel()
        #expect(pending > 0 && pending < count, "the kill came between pieces")
        // Every row the gateway settled, the cloud holds.
        #expect(try await cloudVersion(system) ?? 0 >= Int64(count - pending))

        let (restarted, server, gateway) = try await restartInProcess(system, cloudURL: cloudURL)
        let synced = try await call(system, gateway, .POST, "/v1/tables/orders/sync", nil)
        #expect(synced.status == 200)
        let stats = try await call(system, gateway, .GET, "/stats", nil, token: SyncSystem.gatewayAdmin).json
        // Only what the killed process had not applied is applied now, from the cloud's record.
        #expect(stats["sync"]?["rows_accepted"]?.int.map(Int.init) ?? 0 <= pending)
        // The batch being applied, and, if the link model sized batches under 10,000 rows, the
        // ones of a pipelined drain behind it: the one on the wire beside it, the one sent as
        // its answer came, before it was applied, and the one built ahead beside those two.
        #expect((1...4).contains(stats["sync"]?["batches_resent"]?.int ?? 0), "\(stats["sync"] ?? .null)")
        #expect(stats["tables"]?["orders"]?["outbox_pending"]?.int == 0)
        #expect(stats["tables"]?["orders"]?["rows"]?.int.map(Int.init) == count)
        #expect(try await cloudVersion(system) == Int64(count))

        // Row by row: each at a distinct cloud version, with the values written.
        var versions: [Int64] = []
        var since: Int64 = 0
        while true {
            let page = try await call(system, gateway, .GET, "/v1/tables/orders/rows?since=\(since)&limit=1000", nil).json
            for row in page["rows"]?.array ?? [] {
                let id = row["id"]?.string ?? ""
                let index = Int(id.dropFirst()) ?? -1
                #expect(row["values"]?["customer"]?.string == "c\(index)")
                if let version = row["version"]?.int { versions.append(version) }
            }
            guard page["more"]?.bool == true, let next = page["next_since"]?.int else { break }
            since = next
        }
        #expect(versions.count == count)
        #expect(Set(versions) == Set(1...Int64(count)))

        try await server.stop()
        try restarted.close()
        try await system.shutdown()
    }

    /// The killed gateway restarted in this process on its data directory, against `cloudURL`.
    func restartInProcess(_ system: SyncSystem, cloudURL: String) async throws -> (Gateway, ServiceRunner, Endpoint) {
        var config = try GatewayConfig.load(path: try configFile(system, cloudURL: cloudURL))
        config.server.logLevel = "error"
        let restarted = try Gateway(config: config, logger: Logger(label: "restarted"))
        let server = ServiceRunner()
        try await server.start { report in restarted.services(port: 0, onServerRunning: report) }
        return (restarted, server, Endpoint(port: server.port))
    }

    static func template(_ system: SyncSystem, extra: String = "", link lines: [String] = []) throws -> String {
        var config = system.config
        config.logLevel = "info"
        return config.gatewayTOML(
            "gw-a", dataDirectory: "\(system.root)/gw-a-process",
            link: .init(url: "@CLOUD@", retryMin: "50ms", retryMax: "500ms", lines: lines), extra: extra)
    }

    /// Where a gateway listens, in or out of process.
    struct Endpoint: Sendable {
        let port: Int
    }

    func call(
        _ system: SyncSystem, _ gateway: Endpoint, _ method: HTTPMethod, _ path: String, _ body: String?,
        token: String = SyncSystem.clientToken
    ) async throws -> SyncSystem.Reply {
        try await LoopbackRequest.send(gateway.port, method, path, body, token: token, client: system.http, timeout: .seconds(60))
    }

    func cloudVersion(_ system: SyncSystem) async throws -> Int64? {
        try await system.cloudRequest(
            .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]
        ).json["tables"]?["orders"]?["version"]?.int
    }
}
