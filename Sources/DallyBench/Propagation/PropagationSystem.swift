import AsyncHTTPClient
import DallyCloud
import DallyCore
import DallyGateway
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// A cloud and gateways A and B on 127.0.0.1, each on a free port with its own data
/// directory under `root`, and the HTTP client the samples use.
struct PropagationSystem {
    let live: LiveSystem
    let http: BenchHTTP

    /// Gateway A's and B's base URLs.
    var a: String { "http://127.0.0.1:\(live.port(of: BenchConfigs.gatewayID(0)))" }
    var b: String { "http://127.0.0.1:\(live.port(of: BenchConfigs.gatewayID(1)))" }

    static func start(root: String, synchronousFull: Bool, logLevel: String) async throws -> PropagationSystem {
        let columns = BenchConfigs.orderColumns
        let live = LiveSystem(
            config: BenchConfigs.system(
                gateways: 2, columns: columns, synchronousFull: synchronousFull, logLevel: logLevel),
            root: root, label: "dally.bench", gracefulShutdownLimit: ServiceRunner.benchShutdownLimit)
        do {
            try await live.startCloud(
                try BenchConfigs.cloud(
                    directory: live.directory("cloud"), gateways: 2, columns: columns,
                    synchronousFull: synchronousFull, logLevel: logLevel))
            for n in 0..<2 {
                let id = BenchConfigs.gatewayID(n)
                let config = try BenchConfigs.gateway(
                    n, directory: live.directory(id), cloudPort: live.cloudPort, columns: columns,
                    synchronousFull: synchronousFull, logLevel: logLevel)
                try await live.startGateway(id, try Gateway(config: config, logger: Logger(label: "dally.\(id)")))
            }
        } catch {
            try? await live.shutdown(cloudFirst: true)
            throw error
        }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 8
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        return PropagationSystem(live: live, http: BenchHTTP(client: http))
    }

    /// Shuts the client down, stops the cloud (its notify hub answers the gateways' parked
    /// polls), then the gateways, and closes every store; reports the first error.
    func stop() async throws {
        var failure: (any Error)?
        do { try await http.client.shutdown() } catch { failure = failure ?? error }
        do { try await live.shutdown(cloudFirst: true) } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    // MARK: - Samples

    func measure(samples: Int, warmup: Int, wait: Int) async throws -> PropagationFigures {
        var figures = PropagationFigures()
        var cursor = try await latestCursor(b)
        let clock = ContinuousClock()
        let run = UUID().uuidString.prefix(8).lowercased()
        for i in 0..<(warmup + samples) {
            let id = "prop-\(run)-\(i)"
            let (b, http) = (self.b, self.http)
            let since = cursor
            let poll = Task { try await Self.awaitRow(id, on: b, since: since, wait: wait, http: http) }
            do {
                // Let the long-poll reach B and park before the clock starts.
                try await Task.sleep(for: .milliseconds(2))
                let start = clock.now
                let put = try await http.call(.PUT, a + "/v1/tables/orders/rows/\(id)", body: BenchHTTP.order(i))
                guard (200..<300).contains(put.status) else { throw BenchError("PUT on A: \(put.status) \(put.text)") }
                let written = clock.now
                let sync = try await http.call(.POST, a + "/v1/tables/orders/sync")
                let synced = clock.now
                guard sync.status == 200, sync.json["status"] == .string("synced") else {
                    throw BenchError("sync-now on A: \(sync.status) \(sync.text)")
                }
                let (arrived, next) = try await poll.value
                cursor = next
                guard i >= warmup else { continue }
                figures.endToEnd.add(arrived - start)
                figures.put.add(written - start)
                figures.syncNow.add(synced - written)
                if arrived < synced { figures.beforeSyncReturned += 1 }
            } catch {
                poll.cancel()
                throw error
            }
        }
        return figures
    }

    /// Where B's changes feed ends now.
    private func latestCursor(_ base: String) async throws -> Int64 {
        var since: Int64 = 0
        while true {
            let page = try await http.call(
                .GET, base + "/v1/tables/orders/changes?since=\(since)&wait=0&limit=1000")
            guard page.status == 200, case .int(let next) = page.json["next_since"] else {
                throw BenchError("changes on B: \(page.status) \(page.text)")
            }
            since = next
            guard page.json["more"] == .bool(true) else { return since }
        }
    }

    /// Long-polls `base`'s changes feed from `since` until a page holds row `id`; when that
    /// page arrived, and the cursor after it.
    private static func awaitRow(_ id: String, on base: String, since: Int64, wait: Int, http: BenchHTTP) async throws
        -> (ContinuousClock.Instant, Int64)
    {
        var since = since
        let deadline = ContinuousClock.now + .seconds(2 * wait)
        while ContinuousClock.now < deadline {
            let page = try await http.call(
                .GET, base + "/v1/tables/orders/changes?since=\(since)&wait=\(wait)")
            let arrived = ContinuousClock.now
            guard page.status == 200, case .int(let next) = page.json["next_since"] else {
                throw BenchError("long-poll on B: \(page.status) \(page.text)")
            }
            since = next
            if case .array(let changes) = page.json["changes"], changes.contains(where: { $0["id"] == .string(id) }) {
                return (arrived, since)
            }
        }
        throw BenchError("row \(id) did not reach gateway B within \(2 * wait) s")
    }
}
