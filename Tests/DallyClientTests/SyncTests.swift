import DallyClient
import Testing

/// Sync-now, conflicts, stats and uplinks through the client, with a real cloud and two gateways.
@Suite struct SyncTests {
    struct Doc: Codable, Sendable, Equatable {
        var text: String?
        var rev: Int?
    }

    /// The first change to `id` on a feed from `since` that satisfies `accept`.
    static func awaitChange(
        _ table: Table<Doc>, id: String, since: Int64 = 0, _ accept: @Sendable (Row<Doc>) -> Bool = { _ in true }
    ) async throws -> Row<Doc> {
        for try await change in table.changes(since: since, options: .init(wait: .seconds(5))) where change.id == id && accept(change) {
            return change
        }
        throw TestFailure("the feed ended")
    }

    @Test func syncNowAndAManualConflictSettled() async throws {
        try await ClientSystem.run(gateways: ["gw-a", "gw-b"], cloud: true) { system in
            let a = system.client("gw-a")
            let b = system.client("gw-b")
            do {
                let docsA = a.table("docs", as: Doc.self)
                let docsB = b.table("docs", as: Doc.self)
                try await docsA.put(id: "d1", Doc(text: "v0", rev: 0))
                guard case .synced(let report) = try await docsA.sync() else { throw TestFailure("sync-now was queued") }
                #expect(report.sent == 1)
                #expect(report.accepted == 1)
                _ = try await Self.awaitChange(docsB, id: "d1") { $0.version == 1 }

                // Both change d1; A's reaches the cloud first, B's is parked as an open conflict.
                try await docsA.put(id: "d1", Doc(text: "from A", rev: 1))
                try await docsB.put(id: "d1", Doc(text: "from B", rev: 1))
                guard case .synced(let fromA) = try await docsA.sync() else { throw TestFailure("A's sync was queued") }
                #expect(fromA.accepted == 1)
                guard case .synced = try await docsB.sync() else { throw TestFailure("B's sync was queued") }
                let open = try await b.conflicts(table: "docs")
                let conflict = try #require(open.first { $0.id == "d1" })
                #expect(conflict.kind == "conflict")
                #expect(conflict.status == "open")
                #expect(conflict.policy == "manual")
                #expect(conflict.server?["values"]?["text"] == "from A")
                #expect(try conflict.local?.decoded(as: Doc.self).values == Doc(text: "from B", rev: 1))

                let settled = try await b.settle(table: "docs", id: "d1", .write(Doc(text: "merged", rev: 2)))
                #expect(try settled.decoded(as: Doc.self).values == Doc(text: "merged", rev: 2))
                #expect(try await b.conflicts(table: "docs").isEmpty)
                let all = try await b.conflicts(table: "docs", includeSettled: true)
                #expect(all.first?.status == "resolved")
                guard case .synced = try await docsB.sync() else { throw TestFailure("B's second sync was queued") }
                let merged = try await Self.awaitChange(docsA, id: "d1") { $0.values?.text == "merged" }
                #expect(merged.values == Doc(text: "merged", rev: 2))
                try await b.forgetConflict(table: "docs", id: "d1")
                #expect(try await b.conflicts(table: "docs", includeSettled: true).isEmpty)
            } catch {
                try? await a.shutdown()
                try? await b.shutdown()
                throw error
            }
            try await a.shutdown()
            try await b.shutdown()
        }
    }

    @Test func statsAndUplinkOverridesWithTheAdminToken() async throws {
        try await ClientSystem.run(gateways: ["gw-a"], cloud: true) { system in
            try await system.with(token: ClientSystem.adminToken) { admin in
                try await system.with { client in
                    let uplinks = try await admin.uplinks()
                    let uplink = try #require(uplinks.first)
                    #expect(uplink.name == "default")
                    #expect(uplink.availability == .auto)

                    let down = try await admin.setUplink("default", availability: .unavailable)
                    #expect(down.availability == .unavailable)
                    #expect(down.available == false)
                    try await client.table("orders").put(id: "o1", ["total": 1.5])
                    guard case .queued(let reason) = try await client.table("orders").sync() else {
                        throw TestFailure("synced over an unavailable uplink")
                    }
                    #expect(!reason.isEmpty)
                    #expect(try await admin.setUplink("default", availability: .auto).availability == .auto)
                    await #expect(throws: DallyClientError.self) { try await admin.setUplink("nope", availability: .auto) }

                    let stats = try await admin.stats()
                    #expect(stats["tables"]?["orders"]?["rows"] == 1)
                    #expect(stats["uplinks"] != nil)
                    // A client token may not read stats.
                    do {
                        _ = try await client.stats()
                        Issue.record("a client token read /stats")
                    } catch let error as DallyClientError {
                        #expect(error.code == .forbidden)
                    }
                }
            }
        }
    }
}
