import AsyncHTTPClient
import DallyCore
import DallySync
import DallyTestSupport
import Foundation
import Testing

/// Real processes: two `dally cloud` nodes on one PostgreSQL, three gateways writing through
/// both. Whatever fails (a node killed mid-batch, the database restarted under load), every
/// acknowledged row is in the database once, at a version of its own, and every gateway ends
/// with the same rows as the database.
@Suite(.serialized) struct CloudNodesEndToEndTests {
    static let enabled = FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)

    /// Syncs every gateway until none has a row unacknowledged and each holds `expected`; when
    /// they do not within a minute, records where each gateway stands and what its log and the
    /// nodes' logs warned of, so that a failure says why.
    func converge(_ system: CloudNodesSystem, expected: Set<String>) async throws -> Bool {
        let converged = await eventually(within: .seconds(60)) {
            for id in CloudNodesSystem.gatewayIDs {
                await system.sync(id)
                guard (try? await system.unacknowledged(id)) == 0 else { return false }
            }
            for id in CloudNodesSystem.gatewayIDs {
                guard (try? await system.rowIDs(id)) == expected else { return false }
            }
            return true
        }
        if !converged {
            var report: [String] = []
            let database = (try? system.databaseRows()) ?? [:]
            for id in CloudNodesSystem.gatewayIDs {
                let unacknowledged = (try? await system.unacknowledged(id)).map(String.init) ?? "?"
                let held = (try? await system.rowIDs(id)) ?? []
                let missing = expected.subtracting(held).sorted()
                // Where the gateway's pulls stand against the versions of what it lacks: a cursor
                // past them means a page skipped rows; one behind, that it was never told.
                let table = try? await system.call(id, .GET, "/stats", nil, token: system.config.gatewayAdminToken)
                    .json["tables"]?["orders"]
                let versions = missing.compactMap { database[$0] }
                report.append(
                    "\(id): \(unacknowledged) unacknowledged, \(held.count) rows of \(expected.count) "
                        + "(missing \(missing.count): \(missing.prefix(5)) at versions \(versions.min() ?? 0)…\(versions.max() ?? 0); "
                        + "extra \(held.subtracting(expected).sorted().prefix(5))); cloud_version "
                        + "\(table?["cloud_version"]?.int.map(String.init) ?? "?"), resyncs \(table?["resyncs"]?.int.map(String.init) ?? "?"), "
                        + "cloud_removed \(table?["cloud_removed"]?.int.map(String.init) ?? "?"), "
                        + "database at \(database.values.max() ?? 0)")
                report.append(contentsOf: Self.warnings(system.gateways[id]?.log ?? "").map { "  \(id) | \($0)" })
            }
            for (n, node) in system.nodes.enumerated() {
                report.append(contentsOf: Self.warnings(node.log).map { "  node \(n) | \($0)" })
            }
            Issue.record(Comment(rawValue: "the gateways did not converge:\n" + report.joined(separator: "\n")))
        }
        return converged
    }

    /// The last lines of `log` logged above info.
    static func warnings(_ log: String) -> [String] {
        Array(log.split(separator: "\n").filter { !$0.contains(" info ") && !$0.contains(" debug ") }.suffix(15).map(String.init))
    }

    func expectDatabaseHoldsOnce(_ system: CloudNodesSystem, _ expected: Set<String>) throws {
        let rows = try system.databaseRows()
        #expect(Set(rows.keys) == expected)
        // One version per change, none shared: nothing was applied twice.
        #expect(Set(rows.values).count == rows.count)
        #expect(rows.values.max() == Int64(expected.count))
    }

    @Test(.enabled(if: enabled)) func aNodeKilledMidBatchLosesNothingAndAppliesNothingTwice() async throws {
        let system = try await offPool { try CloudNodesSystem(cluster: try PostgresCluster.shared()) }
        do {
            try await offPool { try system.start() }
            var expected: Set<String> = []
            for id in CloudNodesSystem.gatewayIDs {
                try await system.write(id, prefix: "\(id)-1", count: 200)
                expected.formUnion((0..<200).map { "\(id)-1-\($0)" })
            }
            // Every gateway sends at once; node 0, the one they prefer, dies in the middle.
            async let a: Int = system.sync("gw-a")
            async let b: Int = system.sync("gw-b")
            async let c: Int = system.sync("gw-c")
            _ = await eventually(within: .seconds(5)) { ((try? system.databaseRows().count) ?? 0) > 0 }
            system.nodes[0].kill9()
            _ = await (a, b, c)
            // More writes after the kill go to node 1.
            for id in CloudNodesSystem.gatewayIDs {
                try await system.write(id, prefix: "\(id)-2", count: 20)
                expected.formUnion((0..<20).map { "\(id)-2-\($0)" })
            }
            #expect(try await converge(system, expected: expected))
            try expectDatabaseHoldsOnce(system, expected)
            // Each gateway moved on from the dead node with no failure of its own to show:
            // counted per uplink and told in its log.
            for id in CloudNodesSystem.gatewayIDs {
                let stats = try await system.call(id, .GET, "/stats", nil, token: system.config.gatewayAdminToken).json
                guard case .array(let uplinks)? = stats["uplinks"], let uplink = uplinks.first else {
                    Issue.record("\(id): no uplink in /stats")
                    continue
                }
                #expect((uplink["node_moves"]?.int ?? 0) >= 1, "\(id)")
                #expect([system.nodeURL(0), system.nodeURL(1)].contains(uplink["node"]?.string ?? ""), "\(id)")
                #expect(system.gateways[id]?.log.contains("requests go to the next") == true, "\(id)")
            }
            // What each gateway told node 0 it declares is in the database: node 1 shows it too.
            var request = HTTPClientRequest(url: system.nodeURL(1) + "/stats")
            request.headers.add(name: "Authorization", value: "Bearer \(system.config.cloudAdminToken)")
            let response = try await system.http.execute(request, timeout: .seconds(60))
            let stats = try JSONParser.parse(Array((try await response.body.collect(upTo: 1 << 20)).readableBytesView))
            for id in CloudNodesSystem.gatewayIDs {
                let declaration = stats["gateways"]?[id]?["declaration"]
                #expect(declaration?["version"]?.string == DallyVersion.current, "\(id): \(stats)")
                #expect(declaration?["differences"] == .object([]), "\(id): \(stats)")
            }
        } catch {
            try? await system.shutdown()
            throw error
        }
        try await system.shutdown()
    }

    @Test(.enabled(if: enabled)) func postgresRestartedUnderLoadLosesNothing() async throws {
        // A cluster of its own: this test restarts it.
        let cluster = try await offPool { try PostgresCluster.start() }
        defer { cluster.stop() }
        let system = try await offPool { try CloudNodesSystem(cluster: cluster) }
        do {
            try await offPool { try system.start() }
            var expected: Set<String> = []
            for round in 0..<6 {
                for id in CloudNodesSystem.gatewayIDs {
                    try await system.write(id, prefix: "\(id)-\(round)", count: 30)
                    expected.formUnion((0..<30).map { "\(id)-\(round)-\($0)" })
                }
                async let a: Int = system.sync("gw-a")
                async let b: Int = system.sync("gw-b")
                async let c: Int = system.sync("gw-c")
                if round == 2 {
                    try await offPool { try cluster.stopServer() }
                    // Without its database a node answers batches 503 with Retry-After, and lives on.
                    let batch = BatchRequest(
                        batchID: "outage", gateway: "gw-a", replica: "probe", since: TableVersions([]),
                        sections: [
                            .init(
                                table: "orders", columns: ["customer"],
                                changes: [.init(id: "outage-1", baseVersion: nil, updatedAt: 1, deleted: false, values: ["x"])])
                        ])
                    let refused = try await system.post(batch, toNode: 1)
                    #expect(refused.status == 503)
                    #expect(refused.headers.first(name: "Retry-After") == "1")
                    #expect(refused.errorCode == "store_unavailable")
                    // Alive, not ready: a load balancer's readiness check moves away from it.
                    #expect(try await system.get("/healthz", fromNode: 1).status == 200)
                    let ready = try await system.get("/readyz", fromNode: 1)
                    #expect(ready.status == 503)
                    #expect(ready.errorCode == "store_unavailable")
                    try await offPool { try cluster.startServer() }
                }
                _ = await (a, b, c)
            }
            #expect(try await converge(system, expected: expected))
            try expectDatabaseHoldsOnce(system, expected)
            // Ready again once each node's listener is back (its reconnection backs off up to 2 s).
            for n in system.nodes.indices {
                #expect(await eventually(within: .seconds(30)) { (try? await system.get("/readyz", fromNode: n))?.status == 200 })
            }
            // A path segment is read percent-decoded; one that decodes to what no batch id holds
            // (U+0000, which PostgreSQL refuses in a text) is refused before the store is asked.
            let nul = try await system.get("/v1/batches/b%00", fromNode: 0, as: "gw-a")
            #expect(nul.status == 400, "\(nul.body)")
            #expect(nul.errorCode == "bad_request")
            #expect(try await system.get("/v1/batches/never%2Dsent", fromNode: 0, as: "gw-a").status == 404)
            // Both nodes survived the outage, and told it in words an operator can act on, not
            // PostgresNIO's "PSQLError – Generic description…".
            #expect(system.nodes.allSatisfy { $0.process.isRunning })
            for node in system.nodes {
                #expect(node.log.contains("lost the commit listener's database connection"))
                #expect(!node.log.contains("Generic description"))
            }
        } catch {
            try? await system.shutdown()
            throw error
        }
        try await system.shutdown()
    }
}
