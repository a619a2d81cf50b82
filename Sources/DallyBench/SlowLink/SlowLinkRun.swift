import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallyFrugal
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// One slow-link case of `dally-bench slowlink`: a fresh cloud and gateway `edge`, whose only
/// uplink (class `satellite`, the shipped defaults) goes through a shaped ``CountingRelay``;
/// what it took to move one object or one backlog of rows, optionally cut half-way.
final class SlowLinkRun: Sendable {
    static let token = "slowlink-bench-client-token"
    static let admin = "slowlink-bench-admin-token"
    static let tables: [SystemConfig.Table] = [
        .init(
            "files", columns: ["name TEXT", "blob OBJECT"],
            upload: #"{ max_delay = "1h", networks = ["satellite"] }"#,
            uploadObjects: #"{ max_delay = "1h", networks = ["satellite"] }"#),
        .init(
            "orders", columns: ["customer TEXT", "total REAL", "notes TEXT"],
            upload: #"{ max_delay = "1h", networks = ["satellite"] }"#),
    ]

    /// What a case took.
    struct Outcome: Sendable {
        var seconds: Double
        /// When the cloud held it all, asked of the cloud itself on loopback (not over the
        /// link): the gateway learns it an answer's trip later, at `seconds`.
        var atCloudSeconds: Double?
        var bytesUp: Int
        var bytesDown: Int
        var failures: Int64
        var wastedBytes: Int64
        var resumedBytes: Int64
        var measuredUp: Double?
        /// HTTP requests that crossed the link.
        var requests: Int
    }

    let live: LiveSystem
    let relay: CountingRelay
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    private let base: String

    private init(live: LiveSystem, relay: CountingRelay, base: String) {
        self.live = live
        self.relay = relay
        self.base = base
    }

    /// Starts a cloud, a relay of `shape` and the gateway behind it.
    static func start(shape: LinkShape, logLevel: String) async throws -> SlowLinkRun {
        let system = SystemConfig(
            tables: tables, gateways: [.init(id: "edge", secret: "slowlink-bench-secret-edge")],
            clients: [.init(name: "bench", token: token)], cloudAdminToken: admin, gatewayAdminToken: admin,
            logLevel: logLevel, loopbackAnyPort: true, synchronous: "normal")
        let live = LiveSystem(
            config: system, rootPrefix: "dally-bench-slowlink-", label: "dally.bench",
            logLevel: Logger.Level(rawValue: logLevel), gracefulShutdownLimit: ServiceRunner.benchShutdownLimit)
        let relay = CountingRelay(name: "satellite", now: { 0 }, shape: shape)
        do {
            try await live.startCloud()
            let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: live.cloudPort)
            let config = try system.gateway(
                "edge", dataDirectory: live.directory("edge"),
                link: .init(url: live.cloudURL, notifyNetworks: [], retryMin: "500ms", retryMax: "5s"),
                uplinks: [.init("sat", class: "satellite", url: "http://127.0.0.1:\(port)")], classes: ["satellite"])
            try await live.startGateway("edge", config)
        } catch {
            try? await relay.stop()
            try? await live.shutdown()
            throw error
        }
        let run = SlowLinkRun(live: live, relay: relay, base: "http://127.0.0.1:\(live.port(of: "edge"))")
        do {
            try await run.settleStart()
        } catch {
            await run.stop()
            throw error
        }
        return run
    }

    /// Waits out the gateway's first wake: a fresh gateway pulls every table once as it
    /// starts, a round trip of the link, and a case begun meanwhile would wait for it and
    /// time it too (the 0.5 MiB object at 128,000 B/s read 0.6 s slower). A sync-now of every
    /// table, with nothing to send, is answered once that pull and its own are done.
    private func settleStart() async throws {
        for table in Self.tables {
            try await call(.POST, "/v1/tables/\(table.name)/sync", body: nil, acceptQueued: true)
        }
    }

    func stop() async {
        try? await relay.stop()
        try? await http.shutdown()
        try? await live.shutdown()
    }

    /// Puts `object` into `files`, then syncs it over the link, cutting every connection once
    /// half its bytes crossed when `cut`.
    func object(_ object: SyntheticObject, cut: Bool) async throws -> Outcome {
        try await call(.PUT, "/v1/tables/files/rows/f1/objects/blob", body: object.bytes(at: 0, count: object.size))
        return try await measure(
            table: "files", cutAt: cut ? object.size / 2 : nil,
            atCloud: { try await self.cloudCount("objects", "objects") >= 1 },
            done: { try await self.counter("objects_uploaded") >= 1 })
    }

    /// Writes `count` wide orders (notes of `noteBytes` hex characters), then syncs them. The
    /// uplink is held down while they are written: a full batch would otherwise go before the
    /// measurement starts, and the run would time only the rest.
    func rows(_ count: Int, noteBytes: Int, cut: Bool) async throws -> Outcome {
        try await setUplink("unavailable")
        var random = SplitMix64(seed: 20)
        var written = 0
        var total = 0
        while written < count {
            let rows = (written..<min(written + 500, count)).map { i -> String in
                let notes = (0..<noteBytes / 2).map { _ in String(format: "%02x", UInt32(random.next() & 0xff)) }.joined()
                return #"{"id":"o\#(i)","values":{"customer":"c\#(i % 97)","total":\#(i % 1000).5,"notes":"\#(notes)"}}"#
            }
            total += rows.reduce(0) { $0 + $1.utf8.count }
            try await call(.POST, "/v1/tables/orders/batch", body: Array(#"{"created":[\#(rows.joined(separator: ","))]}"#.utf8))
            written += rows.count
        }
        try await setUplink("auto")
        return try await measure(
            table: "orders", cutAt: cut ? total / 4 : nil,
            atCloud: { try await self.cloudCount("batches", "rows_accepted") >= Int64(count) },
            done: { try await self.counter("rows_accepted") >= Int64(count) })
    }

    /// Sync-now of `table` until `done`, timed from the first, and when `atCloud` first held
    /// (polled every 10 ms); the relay's counts over it.
    private func measure(
        table: String, cutAt: Int?, atCloud: @escaping @Sendable () async throws -> Bool,
        done: @escaping @Sendable () async throws -> Bool
    ) async throws -> Outcome {
        relay.reset()
        let start = ContinuousClock.now
        let cutter = Task { [relay] in
            guard let cutAt else { return }
            while relay.counts.bytesUp < cutAt { try await Task.sleep(for: .milliseconds(50)) }
            await relay.cut()
        }
        let arrival = Task { () -> Double? in
            while !Task.isCancelled {
                if (try? await atCloud()) == true { return (ContinuousClock.now - start).benchSeconds }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return nil
        }
        // Both stop with the case, however it ends.
        defer {
            cutter.cancel()
            arrival.cancel()
        }
        var finished = false
        var attempts = 0
        while !finished, attempts < 200 {
            try await call(.POST, "/v1/tables/\(table)/sync", body: nil, acceptQueued: true)
            finished = try await done()
            attempts += 1
        }
        guard finished else { throw BenchError("\(table) did not finish syncing") }
        let seconds = (ContinuousClock.now - start).benchSeconds
        // The cloud held it before the gateway heard so: its poll has found it, or does at once.
        let atCloudSeconds = await arrival.value
        let counts = relay.counts
        let uplink: JSONValue? = if case .array(let list)? = try await stats()["uplinks"] { list.first } else { nil }
        return Outcome(
            seconds: seconds, atCloudSeconds: atCloudSeconds, bytesUp: counts.bytesUp, bytesDown: counts.bytesDown,
            failures: Self.int(uplink?["failures"]), wastedBytes: Self.int(uplink?["wasted_bytes"]),
            resumedBytes: Self.int(uplink?["resumed_bytes"]),
            measuredUp: Self.double(uplink?["link"]?["bytes_per_second_up"]), requests: counts.requests)
    }

    private static func double(_ value: JSONValue?) -> Double? {
        switch value {
        case .double(let d)?: d
        case .int(let i)?: Double(i)
        default: nil
        }
    }

    private static func int(_ value: JSONValue?) -> Int64 {
        if case .int(let i)? = value { i } else { 0 }
    }

    /// Overrides the `sat` uplink's availability (`PUT /v1/admin/uplinks/sat`).
    private func setUplink(_ availability: String) async throws {
        try await call(
            .PUT, "/v1/admin/uplinks/sat", body: Array(#"{"availability":"\#(availability)"}"#.utf8), token: Self.admin)
    }

    private func counter(_ name: String) async throws -> Int64 {
        Self.int(try await stats()["sync"]?[name])
    }

    /// A count in the cloud's own `/stats`, asked on loopback.
    private func cloudCount(_ section: String, _ name: String) async throws -> Int64 {
        Self.int(try await stats(of: live.cloudURL)[section]?[name])
    }

    private func stats(of server: String? = nil) async throws -> JSONValue {
        var request = HTTPClientRequest(url: (server ?? base) + "/stats")
        request.headers.add(name: "Authorization", value: "Bearer \(Self.admin)")
        let response = try await http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 << 20)
        return try JSONParser.parse(Array(body.readableBytesView))
    }

    private func call(
        _ method: HTTPMethod, _ path: String, body: [UInt8]?, acceptQueued: Bool = false, token: String = SlowLinkRun.token
    ) async throws {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        // A sync-now is answered when its wake ends: a 20 MiB object at 2,000 B/s is a wake of
        // three hours (10,486 s ideal). Two hours cut the 16 MiB case at 7,200 s.
        let response = try await http.execute(request, timeout: .seconds(86_400))
        let answer = try await response.body.collect(upTo: 1 << 20)
        guard (200...202).contains(response.status.code), acceptQueued || response.status.code != 202 else {
            throw BenchError("\(method) \(path): \(response.status.code) \(String(buffer: answer))")
        }
    }
}
