import AsyncHTTPClient
import DallyConfig
import DallyCore
import DallyGateway
import DallyTestSupport
import Foundation
import Logging
import Synchronization

/// `dally cloud` child processes (one on SQLite, or `nodes` over one PostgreSQL database) and
/// `gateways` gateways in this process, each with an eager uplink and a notify long-poll, all
/// following `orders`, spread over the nodes. Gateway 0 is the watcher: it only receives; the
/// others take the writes.
struct FleetSystem {
    let clouds: [CloudProcess]
    let cluster: PostgresCluster?
    let live: LiveSystem
    let http: BenchHTTP
    let gateways: Int

    static func start(
        root: String, gateways: Int, nodes: Int, postgres: Bool, dally: String, synchronousFull: Bool, logLevel: String
    ) async throws -> FleetSystem {
        let columns = BenchConfigs.orderColumns
        var system = BenchConfigs.system(
            gateways: gateways, columns: columns, synchronousFull: synchronousFull, logLevel: logLevel)
        // The cloud's [store] is PostgreSQL's then; `synchronous` is for the SQLite replicas.
        let gatewayStore = system.synchronous
        if postgres { system.synchronous = nil }
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 16
        let http = BenchHTTP(client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration))
        let live = LiveSystem(
            config: system, root: root, label: "dally.bench", gracefulShutdownLimit: ServiceRunner.benchShutdownLimit)
        var clouds: [CloudProcess] = []
        var cluster: PostgresCluster?
        do {
            var store = ""
            if postgres {
                let started = try PostgresCluster.start()
                cluster = started
                let database = try started.createDatabase("fleet")
                store = [
                    "[store]", "backend = \"postgresql\"",
                    "url = \"postgres://\(database.username)@\(database.host):\(database.port)/\(database.database)\"",
                ].joined(separator: "\n")
            }
            for n in 0..<nodes {
                let directory = live.directory("cloud-\(n)")
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                let configPath = directory + ".toml"
                let text = system.cloudTOML(dataDirectory: directory, extra: store + "\n[limits]\nmax_waiters = 100000")
                try text.write(toFile: configPath, atomically: true, encoding: .utf8)
                clouds.append(try await CloudProcess(dally: dally, config: configPath, http: http))
            }
            for n in 0..<gateways {
                let id = BenchConfigs.gatewayID(n)
                // Each gateway on a node of its own first, the others after it.
                let urls = (0..<nodes).map { clouds[(n + $0) % nodes].url }
                var link = SystemConfig.CloudLink(url: urls[0], notifyWait: "60s", retryMin: "50ms", retryMax: "1s")
                link.standbyURLs = Array(urls.dropFirst())
                var gatewaySystem = system
                gatewaySystem.synchronous = gatewayStore
                let config = try gatewaySystem.gateway(
                    id, dataDirectory: live.directory(id), link: link,
                    uplinks: [.init("lan", class: "lan", url: urls[0], eager: true)], classes: ["lan"],
                    file: "<bench gateway \(n + 1)>")
                try await live.startGateway(id, try Gateway(config: config, logger: Logger(label: "dally.\(id)")))
            }
            let fleet = FleetSystem(clouds: clouds, cluster: cluster, live: live, http: http, gateways: gateways)
            try await fleet.waitForNotifyPolls()
            return fleet
        } catch {
            for cloud in clouds { cloud.stop() }
            try? await live.shutdown()
            cluster?.stop()
            try? await http.client.shutdown()
            throw error
        }
    }

    /// Stops the clouds first (they answer the gateways' parked polls), then the gateways.
    func stop() async throws {
        for cloud in clouds { cloud.stop() }
        var failure: (any Error)?
        do { try await live.shutdown() } catch { failure = error }
        cluster?.stop()
        do { try await http.client.shutdown() } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    /// Waits until every gateway holds its notify long-poll at a cloud node.
    private func waitForNotifyPolls() async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        var waiting: Int64 = 0
        while ContinuousClock.now < deadline {
            waiting = 0
            for cloud in clouds {
                let stats = try await http.call(.GET, cloud.url + "/stats", token: BenchConfigs.cloudAdminToken)
                if case .int(let parked) = stats.json["notify"]?["waiting"] { waiting += parked }
            }
            if waiting >= gateways { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError("only \(waiting) of \(gateways) gateways hold a notify long-poll after two minutes")
    }

    /// The CPU time of every cloud node so far, in seconds.
    private var cloudCPU: Double {
        get throws { try clouds.reduce(0) { $0 + (try $1.cpuSeconds) } }
    }

    private func base(_ n: Int) -> String { "http://127.0.0.1:\(live.port(of: BenchConfigs.gatewayID(n)))" }

    // MARK: - Measuring

    /// Writes `rate` rows a second, each on a random gateway but the watcher, for `warmup` and
    /// then `seconds` seconds; times each counted row until the watcher's feed holds it, and
    /// the CPU both processes spent from the first counted write until the last arrived.
    func measure(rate: Double, seconds: Double, warmup: Double) async throws -> FleetFigures {
        let total = Int(((warmup + seconds) * rate).rounded())
        let first = Int((warmup * rate).rounded())
        let run = UUID().uuidString.prefix(8).lowercased()
        let arrivals = Arrivals()
        let watcher = Task { [http, watcherBase = base(0)] in
            try await Self.watch(watcherBase, run: run, http: http, arrivals: arrivals)
        }
        defer { watcher.cancel() }
        var starts: [Int: ContinuousClock.Instant] = [:]
        var acrossNodes: Set<Int> = []
        var figures = FleetFigures()
        var cpuAtStart = (cloud: 0.0, gateways: 0.0)
        var windowStart = ContinuousClock.now
        let clock = ContinuousClock()
        let origin = clock.now
        var random = SystemRandomNumberGenerator()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<total {
                try await clock.sleep(until: origin + .seconds(Double(i) / rate))
                if i == first {
                    cpuAtStart = (try cloudCPU, ProcessCPU.seconds)
                    windowStart = clock.now
                }
                let writer = Int.random(in: 1..<gateways, using: &random)
                let target = base(writer)
                // Gateway n is on node n % nodes first; the watcher on node 0.
                if writer % clouds.count != 0 { acrossNodes.insert(i) }
                starts[i] = clock.now
                group.addTask { [http] in
                    let put = try await http.call(
                        .PUT, target + "/v1/tables/orders/rows/fleet-\(run)-\(i)", body: BenchHTTP.order(i))
                    guard (200..<300).contains(put.status) else { throw BenchError("PUT: \(put.status) \(put.text)") }
                }
            }
            try await group.waitForAll()
        }
        let deadline = clock.now + .seconds(60)
        while arrivals.times.withLock({ $0.count }) < total {
            guard clock.now < deadline else {
                throw BenchError("\(total - arrivals.times.withLock { $0.count }) of \(total) rows did not reach the watcher within 60 s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let arrived = arrivals.times.withLock { $0 }
        figures.cloudCPU = try cloudCPU - cpuAtStart.cloud
        figures.gatewaysCPU = ProcessCPU.seconds - cpuAtStart.gateways
        figures.seconds = (clock.now - windowStart).benchSeconds
        for i in first..<total {
            guard let start = starts[i], let end = arrived[i] else { continue }
            figures.propagation.add(end - start)
            if acrossNodes.contains(i) { figures.acrossNodes.add(end - start) }
        }
        figures.changes = total - first
        for _ in 0..<10 {
            for (path, samples) in [("/stats", \FleetFigures.cloudStats), ("/metrics", \FleetFigures.cloudMetrics)] {
                let asked = clock.now
                let reply = try await http.call(.GET, clouds[0].url + path, token: BenchConfigs.cloudAdminToken)
                guard reply.status == 200 else { throw BenchError("GET \(path): \(reply.status) \(reply.text)") }
                figures[keyPath: samples].add(clock.now - asked)
            }
        }
        return figures
    }

    /// Long-polls the watcher's feed from its end, noting when each of this run's rows arrives.
    private static func watch(
        _ base: String, run: String, http: BenchHTTP, arrivals: Arrivals
    ) async throws {
        let prefix = "fleet-\(run)-"
        var since: Int64 = 0
        var caughtUp = false
        while !Task.isCancelled {
            let page = try await http.call(
                .GET, base + "/v1/tables/orders/changes?since=\(since)&wait=\(caughtUp ? 30 : 0)&limit=1000")
            let now = ContinuousClock.now
            guard page.status == 200, case .int(let next) = page.json["next_since"] else {
                throw BenchError("long-poll on the watcher: \(page.status) \(page.text)")
            }
            since = next
            caughtUp = page.json["more"] != .bool(true)
            guard case .array(let changes) = page.json["changes"] else { continue }
            arrivals.times.withLock { arrivals in
                for change in changes {
                    guard case .string(let id) = change["id"], id.hasPrefix(prefix),
                        let i = Int(id.dropFirst(prefix.count)), arrivals[i] == nil
                    else { continue }
                    arrivals[i] = now
                }
            }
        }
    }

    /// When each row of the run reached the watcher, by write number.
    final class Arrivals: Sendable {
        let times = Mutex<[Int: ContinuousClock.Instant]>([:])
    }
}
