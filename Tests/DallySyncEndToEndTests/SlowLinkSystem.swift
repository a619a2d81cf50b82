import AsyncHTTPClient
import DallyCore
import DallyFrugal
import DallyTestSupport
import Foundation
import GRDB
import NIOCore

/// A real cloud and gateway `gw-a` whose only uplink, `sat` (class `satellite`), goes through a
/// shaped ``CountingRelay``: a slow link with a delay, shared by all connections and both
/// directions, that counts every byte and can cut every connection at once. The gateway runs
/// on the system clock, so its transfer watch judges real progress.
///
/// Tables: `photos` (rows and objects over the satellite), `orders` (wide rows).
final class SlowLinkSystem: Sendable {
    let base = SyncSystem(config: SyncSystem.config(tables: SlowLinkSystem.tables), cloudExtra: "")
    let relay: CountingRelay
    /// Between the relay and the cloud when the system is run `throughProxy`: what crossed,
    /// and answers it can hold.
    let proxy: InspectingProxy
    /// `[cloud]` lines of the gateway: its request timeout and progress rules.
    let cloudLines: [String]

    static let tables: [SystemConfig.Table] = [
        .init(
            "photos", columns: ["title TEXT", "image OBJECT"],
            upload: #"{ max_delay = "1h", networks = ["satellite"] }"#, download: #"{ period = "1h" }"#,
            uploadObjects: #"{ max_delay = "1h", networks = ["satellite"] }"#),
        .init(
            "orders", columns: ["customer TEXT", "notes TEXT"],
            upload: #"{ max_delay = "1h", networks = ["satellite"] }"#, download: #"{ period = "1h" }"#),
    ]

    init(shape: LinkShape, cloudLines: [String]) {
        // The relay's clock only stamps its activities (which connection moved bytes when);
        // the shape keeps its own time.
        let origin = ContinuousClock.now
        relay = CountingRelay(
            name: "sat",
            now: {
                let elapsed = (ContinuousClock.now - origin).components
                return elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000
            }, shape: shape)
        self.cloudLines = cloudLines
        proxy = InspectingProxy(upstream: "", http: base.http)
    }

    /// - Parameters:
    ///   - notify: whether `gw-a` long-polls the cloud for news over the link (1 s).
    ///   - retry: `gw-a`'s `retry_min` and `retry_max`: how soon it tries again by itself after
    ///     a failure (a sync-now tries at once whatever they say).
    ///   - probeInterval: the `sat` uplink's `probe_interval` (off: no probes, and so no down
    ///     probes either; on, the cheapest class probes every 100 ms while the cloud is silent).
    ///   - cloudBodyTimeout: the cloud's `[server] body_timeout`, when not its default.
    ///   - throughProxy: whether the relay reaches the cloud through ``proxy`` (at loopback speed).
    static func run(
        shape: LinkShape, cloudLines: [String], notify: Bool = false, retry: (min: String, max: String) = ("100ms", "500ms"),
        probeInterval: String = "off", cloudBodyTimeout: Duration? = nil, throughProxy: Bool = false,
        _ body: (SlowLinkSystem) async throws -> Void
    ) async throws {
        let system = SlowLinkSystem(shape: shape, cloudLines: cloudLines)
        do {
            if let cloudBodyTimeout {
                let live = system.base.live
                var config = try live.config.cloud(dataDirectory: live.directory("cloud"), extra: system.base.cloudExtra)
                config.server.bodyTimeout = cloudBodyTimeout
                try await live.startCloud(config)
            } else {
                try await system.base.startCloud()
            }
            var upstreamPort = system.base.cloudServer.port
            if throughProxy {
                try await system.proxy.start(upstream: system.base.live.cloudURL)
                upstreamPort = system.proxy.server.port
            }
            let port = try await system.relay.start(upstreamHost: "127.0.0.1", upstreamPort: upstreamPort)
            let config = try system.base.config.gateway(
                "gw-a", dataDirectory: system.base.live.directory("gw-a"),
                link: .init(
                    url: system.base.live.cloudURL, notifyWait: notify ? "1s" : nil,
                    notifyNetworks: notify ? ["satellite"] : [], retryMin: retry.min, retryMax: retry.max,
                    lines: system.cloudLines),
                uplinks: [.init("sat", class: "satellite", url: "http://127.0.0.1:\(port)", probeInterval: probeInterval)],
                classes: ["satellite"])
            try await system.base.live.startGateway("gw-a", config)
            try await body(system)
        } catch {
            try? await system.relay.stop()
            if throughProxy { try? await system.proxy.server.stop() }
            try? await system.base.shutdown()
            throw error
        }
        try await system.relay.stop()
        if throughProxy { try await system.proxy.server.stop() }
        try await system.base.shutdown()
    }

    /// Starts gateway `gw-b`, whose uplink reaches the cloud directly (no relay): a writer
    /// whose objects `gw-a` then downloads over the slow link.
    func startDirectGateway() async throws {
        let config = try base.config.gateway(
            "gw-b", dataDirectory: base.live.directory("gw-b"),
            link: .init(url: base.live.cloudURL, notifyNetworks: [], retryMin: "100ms", retryMax: "500ms"),
            uplinks: [.init("direct", class: "satellite", url: base.live.cloudURL)], classes: ["satellite"])
        try await base.live.startGateway("gw-b", config)
    }

    /// Streams `object` into `photos/<row>.image` on `gateway`; fails the test unless it is stored.
    func putPhoto(_ row: String, _ object: TestObject, on gateway: String = "gw-a") async throws {
        var request = HTTPClientRequest(
            url: "http://127.0.0.1:\(base.live.port(of: gateway))/v1/tables/photos/rows/\(row)/objects/image")
        request.method = .PUT
        request.headers.add(name: "Authorization", value: "Bearer \(SyncSystem.clientToken)")
        request.body = .bytes(ByteBuffer(bytes: object.bytes(at: 0, count: object.size)))
        let response = try await base.http.execute(request, timeout: .seconds(60))
        let answer = try await response.body.collect(upTo: 1 << 20)
        guard (200...201).contains(response.status.code) else {
            throw TestFailure("PUT object: \(response.status.code) \(String(buffer: answer))")
        }
    }

    /// Writes orders `o<first>`… (`count` of them) on `gw-a` with 400 bytes of notes each (hex
    /// of random bytes: compresses to about half), 500 to a request.
    func writeOrders(_ count: Int, from first: Int = 0) async throws {
        var random = SplitMix64(seed: UInt64(11 + first))
        for start in stride(from: first, to: first + count, by: 500) {
            let rows = (start..<min(start + 500, first + count)).map { i -> String in
                let notes = (0..<200).map { _ in String(format: "%02x", UInt32(random.next() & 0xff)) }.joined()
                return #"{"id":"o\#(i)","values":{"customer":"c\#(i)","notes":"\#(notes)"}}"#
            }
            let reply = try await base.gateway(
                "gw-a", .POST, "/v1/tables/orders/batch", body: #"{"created":[\#(rows.joined(separator: ","))]}"#)
            guard reply.status == 200 else { throw TestFailure("writing orders: \(reply.status) \(reply.body)") }
        }
    }

    /// Whether request bytes went up two connections at once, more than once: the relay read
    /// from one connection, then from another within `gapMs`. One request after another on
    /// two connections leave at least a round trip between their bytes (the second starts
    /// once the first is answered), so a gap shorter than the round trip means both were going.
    func uploadsOverlapped(gapMs: Int64 = 100) -> Bool {
        let up = relay.counts.activities.filter { $0.bytesUp > 0 }.sorted { $0.at < $1.at }
        let switches = zip(up, up.dropFirst()).count { $0.connection != $1.connection && $1.at - $0.at < gapMs }
        return switches >= 2
    }

    /// The rows of `table` each batch brought to the cloud, in the order they were applied, as
    /// the cloud's store records them (every row names the batch that wrote it last).
    func cloudBatchRows(_ table: String) throws -> [Int] {
        var configuration = Configuration()
        configuration.readonly = true
        let store = try DatabaseQueue(path: base.live.directory("cloud") + "/cloud.sqlite", configuration: configuration)
        return try store.read { db in
            try Int.fetchAll(db, sql: "SELECT COUNT(*) FROM \"t_\(table)\" GROUP BY batch ORDER BY MIN(version)")
        }
    }

    /// Cuts every connection once `bytes` went up the link (bounded polling on the relay's
    /// count); fails the test when they never do.
    func cut(onceBytesUpReach bytes: Int) async throws {
        for _ in 0..<1_500 where relay.counts.bytesUp < bytes {
            try await Task.sleep(for: .milliseconds(20))
        }
        guard relay.counts.bytesUp >= bytes else { throw TestFailure("\(relay.counts.bytesUp) bytes up, never \(bytes)") }
        await relay.cut()
    }

    /// The sync engine's wakes and pulls, to compare before and after a step.
    struct PullCounters: Equatable, CustomStringConvertible {
        var cycles: Int64
        var pulls: Int64
        var riding: Int64
        var beside: Int64

        static func - (lhs: PullCounters, rhs: PullCounters) -> PullCounters {
            PullCounters(
                cycles: lhs.cycles - rhs.cycles, pulls: lhs.pulls - rhs.pulls, riding: lhs.riding - rhs.riding,
                beside: lhs.beside - rhs.beside)
        }

        var description: String { "\(cycles) wakes, \(pulls) pulls (\(beside) beside), \(riding) batches carrying pulls" }
    }

    func pullCounters() async throws -> PullCounters {
        let sync = try await stats()["sync"]
        func count(_ name: String) -> Int64 { sync?[name]?.int ?? -1 }
        return PullCounters(
            cycles: count("cycles"), pulls: count("pulls"), riding: count("pulls_riding"), beside: count("pulls_beside"))
    }

    func stats() async throws -> JSONValue {
        try await base.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin).json
    }

    /// The `sat` uplink's entry in `/stats`.
    func uplink() async throws -> JSONValue {
        try await stats()["uplinks"]?.array?.first { $0["name"]?.string == "sat" } ?? .null
    }

    /// One of the cloud's object counters (`/stats` `objects`), -1 when it has none so named.
    func cloudObjectCounter(_ name: String) async throws -> Int64 {
        let reply = try await base.cloudRequest(
            .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")])
        guard reply.status == 200 else { throw TestFailure("cloud /stats: \(reply.status) \(reply.body)") }
        return reply.json["objects"]?[name]?.int ?? -1
    }

    func syncCounter(_ name: String, on gateway: String = "gw-a") async throws -> Int64 {
        try await base.gateway(gateway, .GET, "/stats", token: SyncSystem.gatewayAdmin).json["sync"]?[name]?.int ?? -1
    }

    /// Sync-now of `table` until `done` holds, at most `attempts` times: a sync-now answers
    /// `queued` when a transfer failed, and the engine retries after its backoff.
    func syncUntil(
        _ table: String, on gateway: String = "gw-a", attempts: Int = 20, _ done: () async throws -> Bool
    ) async throws {
        for _ in 0..<attempts {
            _ = try await base.sync(gateway, table: table)
            if try await done() { return }
        }
        throw TestFailure("\(table) did not finish syncing in \(attempts) sync-now calls")
    }
}
