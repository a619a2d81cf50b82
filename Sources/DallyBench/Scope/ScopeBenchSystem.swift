import AsyncHTTPClient
import DallyCore
import DallyGateway
import DallySync
import DallyTestSupport
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// A cloud holding `shop_orders` (`store_id` a scope column) and, one after the other, an
/// unscoped and a scoped gateway pulling it, all on 127.0.0.1.
struct ScopeBenchSystem {
    static let table = "shop_orders"
    static let columns = ["store_id TEXT", "total REAL", "note TEXT"]
    static let unscopedID = BenchConfigs.gatewayID(0)
    static let scopedID = BenchConfigs.gatewayID(1)

    static func storeName(_ n: Int) -> String { "S\(n)" }

    let live: LiveSystem
    let http: HTTPClient
    let logLevel: String

    static func config(logLevel: String) -> SystemConfig {
        var table = SystemConfig.Table(table, columns: columns)
        table.scopeColumns = ["store_id"]
        return SystemConfig(
            tables: [table], gateways: (0..<2).map { .init(id: BenchConfigs.gatewayID($0), secret: BenchConfigs.secret($0)) },
            clients: [.init(name: "bench", token: BenchConfigs.clientToken)],
            cloudAdminToken: BenchConfigs.cloudAdminToken, gatewayAdminToken: BenchConfigs.gatewayAdminToken,
            logLevel: logLevel, loopbackAnyPort: true, synchronous: "normal")
    }

    static func start(root: String, logLevel: String) async throws -> ScopeBenchSystem {
        let live = LiveSystem(
            config: config(logLevel: logLevel), root: root, label: "dally.bench",
            gracefulShutdownLimit: ServiceRunner.benchShutdownLimit)
        do {
            try await live.startCloud()
        } catch {
            try? await live.shutdown(cloudFirst: true)
            throw error
        }
        return ScopeBenchSystem(live: live, http: HTTPClient(eventLoopGroupProvider: .singleton), logLevel: logLevel)
    }

    func stop() async throws {
        var failure: (any Error)?
        do { try await http.shutdown() } catch { failure = failure ?? error }
        do { try await live.shutdown(cloudFirst: true) } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    /// Writes the rows straight into the cloud's store, store after store.
    func seed(stores: Int, rowsPerStore: Int, batchRows: Int) async throws {
        guard let store = live.cloud?.store else { throw BenchError("the cloud is not running") }
        var changes: [BatchRequest.Change] = []
        var batches = 0
        func flush() async throws {
            guard !changes.isEmpty else { return }
            batches += 1
            _ = try await store.send(
                BatchRequest(
                    batchID: "seed-\(batches)", gateway: "seeder", replica: "seeder", since: TableVersions(),
                    sections: [.init(table: Self.table, columns: ["store_id", "total", "note"], changes: changes)]))
            changes.removeAll(keepingCapacity: true)
        }
        for s in 0..<stores {
            for i in 0..<rowsPerStore {
                changes.append(
                    BatchRequest.Change(
                        id: "\(Self.storeName(s))-\(i)", baseVersion: nil, updatedAt: 1_000, deleted: false,
                        values: [.string(Self.storeName(s)), .double(Double(i % 1000) / 10), .string("order \(i) of the day")]))
                if changes.count == batchRows { try await flush() }
            }
        }
        try await flush()
    }

    func measure(store name: String) async throws -> ScopeFigures {
        guard let store = live.cloud?.store, let schema = store.schema(Self.table) else {
            throw BenchError("the cloud is not running")
        }
        let scope = RowScope([.init(column: "store_id", values: [.string(name)])])
        let typed = try scope.validated(against: schema)
        let queryAll = try await readAll(store, scope: nil)
        let queryScoped = try await readAll(store, scope: typed)
        let unscoped = try await pull(Self.unscopedID, scope: nil, expected: queryAll.rows)
        let scoped = try await pull(Self.scopedID, scope: #"{ store_id = "\#(name)" }"#, expected: queryScoped.rows)
        return ScopeFigures(queryAll: queryAll, queryScoped: queryScoped, unscoped: unscoped, scoped: scoped)
    }

    /// Every page of the table, as a gateway at cursor 0 would be served them.
    private func readAll(_ store: any CloudStore, scope: TypedScope?) async throws -> (rows: Int, time: Duration) {
        let start = ContinuousClock.now
        var since: Int64 = 0
        var rows = 0
        while true {
            let page = try await store.changes(
                table: Self.table, since: since, limit: 1000, excludingReplica: "bench/other", scope: scope)
            rows += page.rows.count
            since = page.version
            if !page.more { break }
        }
        return (rows, ContinuousClock.now - start)
    }

    /// Starts gateway `id` fresh with `scope` and syncs it until it holds `expected` rows.
    private func pull(_ id: String, scope: String?, expected: Int) async throws -> ScopeFigures.Pull {
        var table = SystemConfig.Table(Self.table, columns: Self.columns)
        table.scope = scope
        let config = try live.config.gateway(
            id, dataDirectory: live.directory(id), link: .init(url: live.cloudURL, notifyNetworks: []), tables: [table])
        let start = ContinuousClock.now
        try await live.startGateway(id, try Gateway(config: config, logger: Logger(label: "dally.\(id)")))
        let base = "http://127.0.0.1:\(live.port(of: id))"
        var stats = JSONValue.null
        for _ in 0..<10_000 {
            let sync = try await call(.POST, base + "/v1/tables/\(Self.table)/sync", token: BenchConfigs.clientToken)
            guard sync.status == 200 else { throw BenchError("sync-now on \(id): \(sync.status)") }
            stats = try await call(.GET, base + "/stats", token: BenchConfigs.gatewayAdminToken).json
            if case .int(let rows) = stats["tables"]?[Self.table]?["rows"], rows >= expected { break }
        }
        let time = ContinuousClock.now - start
        guard case .int(let rows) = stats["tables"]?[Self.table]?["rows"], case .int(let bytes) = stats["sync"]?["bytes_received"]
        else { throw BenchError("gateway \(id)'s /stats lacks rows or bytes_received") }
        try await live.stopGateway(id)
        return ScopeFigures.Pull(rows: Int(rows), bytes: bytes, time: time)
    }

    private func call(_ method: HTTPMethod, _ url: String, token: String) async throws -> (status: Int, json: JSONValue) {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(600))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        return (Int(response.status.code), (try? JSONParser.parse(Array(buffer: bytes))) ?? .null)
    }
}
