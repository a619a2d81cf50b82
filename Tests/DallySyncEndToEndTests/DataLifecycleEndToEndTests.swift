import DallyCloud
import DallyCore
import DallyGateway
import DallyTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// A wall clock both sides read, moved by the test: upkeep ages rows by it.
final class SharedWallClock: Sendable {
    private let millis = Mutex<Int64>(100 * 86_400_000)
    var now: Int64 { millis.withLock { $0 } }
    func advance(days: Int64) { millis.withLock { $0 += days * 86_400_000 } }
}

@Suite("Data lifecycle end to end: compaction, resync, restore, full outbox")
struct DataLifecycleEndToEndTests {
    static let tables: [SystemConfig.Table] = [
        .init("orders", columns: ["customer TEXT", "total REAL"], extra: ["tombstone_ttl = \"1d\""]),
        .init("telemetry", columns: ["reading REAL"], extra: ["max_pending = 2", "on_full = \"reject\""]),
    ]

    let wall = SharedWallClock()
    let system = SyncSystem(config: SyncSystem.config(tables: DataLifecycleEndToEndTests.tables))

    /// A cloud and gateways `gw-a` and `gw-b` on the shared wall clock, running for `body`.
    func run(_ body: () async throws -> Void) async throws {
        do {
            try await start()
            try await body()
            try await system.shutdown()
        } catch {
            try? await system.shutdown()
            throw error
        }
    }

    func start() async throws {
        let wall = self.wall
        try await system.live.startCloud(
            try system.config.cloud(dataDirectory: system.live.directory("cloud"), extra: SyncSystem.cloudLimits),
            now: { wall.now })
        try await startGateway("gw-a")
        try await startGateway("gw-b")
    }

    func startGateway(_ id: String) async throws {
        let wall = self.wall
        let gateway = try Gateway(config: try system.gatewayConfig(id), logger: Logger(label: "test"), now: { wall.now })
        try await system.live.startGateway(id, gateway)
    }

    func put(_ gateway: String, _ id: String, _ customer: String) async throws {
        let reply = try await system.gateway(
            gateway, .PUT, "/v1/tables/orders/rows/\(id)", body: #"{"values":{"customer":"\#(customer)"}}"#)
        #expect(reply.status == 200, "\(reply.body)")
    }

    func liveIDs(_ gateway: String) async throws -> [String] {
        let reply = try await system.gateway(gateway, .GET, "/v1/tables/orders/rows?limit=1000")
        return (reply.json["rows"]?.array ?? []).compactMap { $0["id"]?.string }.sorted()
    }

    @Test func aStaleClientAndAStaleGatewayAreToldToResyncAndConvergeWithoutLosingADirtyRow() async throws {
        try await run {
            for id in ["o1", "o2", "o3"] { try await put("gw-a", id, id.uppercased()) }
            try await system.sync("gw-a")
            try await system.sync("gw-b")
            #expect(try await liveIDs("gw-b") == ["o1", "o2", "o3"])
            try await system.stopGateway("gw-b")

            let clientCursor = try #require(
                try await system.gateway("gw-a", .GET, "/v1/tables/orders/changes?since=0").json["next_since"]?.int)
            for id in ["o1", "o2"] {
                #expect(try await system.gateway("gw-a", .DELETE, "/v1/tables/orders/rows/\(id)").status == 200)
            }
            try await system.sync("gw-a")

            // Two days on: gw-b, silent for longer than the TTL, no longer holds the horizon back.
            wall.advance(days: 2)
            try await system.sync("gw-a")
            let cloud = try #require(system.cloud)
            #expect(try await cloud.compaction.compact() == ["orders": 2])
            let gatewayA = try #require(system.live.gateway("gw-a"))
            #expect(try await gatewayA.store.compact(now: wall.now).tombstonesPurged == ["orders": 2])

            let stale = try await system.gateway("gw-a", .GET, "/v1/tables/orders/changes?since=\(clientCursor)")
            #expect(stale.status == 409)
            #expect(stale.errorCode == "resync_required")
            #expect((stale.json["error"]?["horizon"]?.int ?? 0) > clientCursor)
            #expect(try await system.gateway("gw-a", .GET, "/v1/tables/orders/changes?since=0").status == 200)

            // gw-b comes back with a change made while away, and is sent the table from scratch.
            try await startGateway("gw-b")
            try await put("gw-b", "o9", "written offline")
            try await system.sync("gw-b")
            try await system.sync("gw-b")
            #expect(try await liveIDs("gw-b") == ["o3", "o9"])
            try await system.sync("gw-a")
            #expect(try await liveIDs("gw-a") == ["o3", "o9"])
            let stats = try await system.gateway("gw-b", .GET, "/stats", token: SyncSystem.gatewayAdmin)
            #expect(stats.json["tables"]?["orders"]?["resyncs"]?.int == 1)
            #expect(stats.json["tables"]?["orders"]?["cloud_removed"]?.int == 2)
            let cloudStats = try await system.cloudRequest(
                .GET, "/stats", as: nil, headers: [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")])
            #expect(cloudStats.json["tables"]?["orders"]?["horizon"]?.int == 5)
            #expect(cloudStats.json["gateways"]?["gw-b"]?["cursor_lag"]?["orders"]?.int == 0)
            // The gateway's own view of the same: its pulls reached the cloud's version.
            let cloudVersion = try #require(cloudStats.json["tables"]?["orders"]?["version"]?.int)
            #expect(stats.json["tables"]?["orders"]?["cloud_version"]?.int == cloudVersion)
        }
    }

    @Test func aGatewayRestoredFromAnOldBackupGetsBackItsOwnLaterRows() async throws {
        try await run {
            try await put("gw-a", "r1", "before the backup")
            try await system.sync("gw-a")
            try await system.stopGateway("gw-a")
            let directory = system.live.directory("gw-a")
            let backup = directory + "-backup"
            try FileManager.default.copyItem(atPath: directory, toPath: backup)

            try await startGateway("gw-a")
            try await put("gw-a", "r2", "after the backup")
            try await system.sync("gw-a")
            try await put("gw-b", "b1", "from b")
            try await system.sync("gw-b")
            try await system.sync("gw-a")
            // A local client's cursor, from the replica before the restore.
            let clientCursor = try #require(
                try await system.gateway("gw-a", .GET, "/v1/tables/orders/changes?since=0").json["next_since"]?.int)
            try await system.stopGateway("gw-a")

            try FileManager.default.removeItem(atPath: directory)
            try FileManager.default.moveItem(atPath: backup, toPath: directory)
            try await startGateway("gw-a")
            #expect(try await liveIDs("gw-a") == ["r1"])
            // The restored replica has made fewer changes than that cursor has seen: the changes
            // it makes next would pass the client by, so it is told to read again, long-poll or not.
            for query in ["since=\(clientCursor)", "since=\(clientCursor)&wait=30"] {
                let ahead = try await system.gateway("gw-a", .GET, "/v1/tables/orders/changes?\(query)")
                #expect(ahead.status == 409)
                #expect(ahead.errorCode == "resync_required")
                #expect((ahead.json["error"]?["horizon"]?.int ?? .max) < clientCursor)
            }
            #expect(try await system.gateway("gw-a", .GET, "/v1/tables/orders/rows?since=\(clientCursor)").status == 409)
            try await system.sync("gw-a")
            try await system.sync("gw-a")
            #expect(try await liveIDs("gw-a") == ["b1", "r1", "r2"])
        }
    }

    @Test func aFullOutboxRefusesNewRowsWith507AndKeepsServing() async throws {
        try await run {
            for id in ["t1", "t2"] {
                #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/telemetry/rows/\(id)", body: #"{"values":{"reading":1}}"#).status == 200)
            }
            let refused = try await system.gateway("gw-a", .PUT, "/v1/tables/telemetry/rows/t3", body: #"{"values":{"reading":3}}"#)
            #expect(refused.status == 507)
            #expect(refused.errorCode == "insufficient_storage")
            #expect(try await system.gateway("gw-a", .GET, "/v1/tables/telemetry/rows/t3").status == 404)
            #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/telemetry/rows/t1", body: #"{"values":{"reading":2}}"#).status == 200)
            // Once the cloud takes them, there is room again.
            try await system.sync("gw-a", table: "telemetry")
            #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/telemetry/rows/t3", body: #"{"values":{"reading":3}}"#).status == 200)
            let stats = try await system.gateway("gw-a", .GET, "/stats", token: SyncSystem.gatewayAdmin)
            #expect(stats.json["tables"]?["telemetry"]?["outbox_max_rows"]?.int == 2)
        }
    }
}
