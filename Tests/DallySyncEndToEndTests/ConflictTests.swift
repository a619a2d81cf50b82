import DallyCore
import Foundation
import Testing

/// Both gateways change the same synced row; the table's policy settles it at the cloud and
/// the outcome reaches both sides.
@Suite struct ConflictTests {
    /// Creates `table/rowID` on A, syncs it to B, then changes it on both: A's change reaches
    /// the cloud first, B's conflicts with it. (B may send its change in the cycle A's change
    /// triggers through notify; the sync-now after it waits for that cycle.)
    func diverge(
        _ system: SyncSystem, table: String, _ rowID: String, created: String, onA: String, onB: String
    ) async throws -> SyncSystem.Reply {
        #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/\(table)/rows/\(rowID)", body: created).status == 200)
        #expect(try await system.sync("gw-a", table: table).status == 200)
        _ = try await system.awaitChange(on: "gw-b", table: table, rowID)
        #expect(try await system.gateway("gw-a", .PUT, "/v1/tables/\(table)/rows/\(rowID)", body: onA).status == 200)
        #expect(try await system.gateway("gw-b", .PUT, "/v1/tables/\(table)/rows/\(rowID)", body: onB).status == 200)
        #expect(try await system.sync("gw-a", table: table).json["accepted"]?.int == 1)
        let synced = try await system.sync("gw-b", table: table)
        #expect(synced.status == 200)
        let recorded = try await system.gateway("gw-b", .GET, "/v1/conflicts?all=true&table=\(table)")
        #expect(recorded.json["conflicts"]?.array?.contains { $0["id"]?.string == rowID } == true, "\(recorded.body)")
        return synced
    }

    @Test func serverWinsKeepsTheCloudRowEverywhere() async throws {
        try await SyncSystem.run { system in
            _ = try await diverge(
                system, table: "notes", "n1", created: #"{"values":{"body":"v0"}}"#, onA: #"{"values":{"body":"from A"}}"#,
                onB: #"{"values":{"body":"from B"}}"#)
            let onB = try #require(try await system.row("gw-b", table: "notes", "n1"))
            #expect(onB["values"]?["body"]?.string == "from A")
            #expect(onB["version"]?.int == 2)
            let conflicts = try await system.gateway("gw-b", .GET, "/v1/conflicts?all=true").json["conflicts"]?.array ?? []
            #expect(conflicts.count == 1)
            #expect(conflicts.first?["winner"]?.string == "server")
            #expect(conflicts.first?["status"]?.string == "resolved")
            // Nothing is left to send, and nothing open.
            #expect(try await system.sync("gw-b", table: "notes").json["sent"]?.int == 0)
            #expect(try await system.gateway("gw-b", .GET, "/v1/conflicts").json["conflicts"]?.array?.isEmpty == true)
        }
    }

    @Test func clientWinsAppliesTheLateChangeEverywhere() async throws {
        try await SyncSystem.run { system in
            _ = try await diverge(
                system, table: "tasks", "t1", created: #"{"values":{"title":"v0"}}"#, onA: #"{"values":{"title":"from A"}}"#,
                onB: #"{"values":{"title":"from B","done":true}}"#)
            let onA = try await system.awaitChange(on: "gw-a", table: "tasks", "t1") { $0["version"]?.int == 3 }
            #expect(onA["values"]?["title"]?.string == "from B")
            let onB = try #require(try await system.row("gw-b", table: "tasks", "t1"))
            #expect(onB["version"]?.int == 3)
            let conflict = try await system.gateway("gw-b", .GET, "/v1/conflicts?all=true").json["conflicts"]?.array?.first
            #expect(conflict?["winner"]?.string == "client")
            #expect(conflict?["server"]?["values"]?["title"]?.string == "from A")
        }
    }

    @Test func lastWriterWinsComparesUpdatedAt() async throws {
        try await SyncSystem.run { system in
            // B wrote later by its clock: B wins although it synced second.
            _ = try await diverge(
                system, table: "orders", "o1", created: #"{"updated_at":1000,"values":{"customer":"v0"}}"#,
                onA: #"{"updated_at":2000,"values":{"customer":"A"}}"#, onB: #"{"updated_at":3000,"values":{"customer":"B"}}"#)
            let onA = try await system.awaitChange(on: "gw-a", table: "orders", "o1") { $0["version"]?.int == 3 }
            #expect(onA["values"]?["customer"]?.string == "B")

            // B wrote earlier by its clock: the cloud's row stays, and B takes it.
            _ = try await diverge(
                system, table: "orders", "o2", created: #"{"updated_at":1000,"values":{"customer":"v0"}}"#,
                onA: #"{"updated_at":3000,"values":{"customer":"A","total":2}}"#,
                onB: #"{"updated_at":2000,"values":{"customer":"B","total":3}}"#)
            let onB = try #require(try await system.row("gw-b", table: "orders", "o2"))
            #expect(onB["values"]?["customer"]?.string == "A")
            #expect(onB["updated_at"]?.int == 3000)
            // The record's rows read as the row routes write them: a REAL `2.0` (it read `2`).
            let listed = try await system.gateway("gw-b", .GET, "/v1/conflicts?all=true&table=orders")
            #expect(listed.body.contains(#""total":2.0"#), "\(listed.body)")
            #expect(!listed.body.contains(#""total":2,"#) && !listed.body.contains(#""total":2}"#), "\(listed.body)")
        }
    }

    /// A gateway whose clock is years ahead would win every last-writer-wins conflict on the
    /// rows it writes: the cloud takes its changes as made when they arrived.
    @Test func aClockYearsAheadDoesNotWinEveryConflict() async throws {
        try await SyncSystem.run { system in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let decade = now + 10 * 365 * 86_400_000
            let path = "/v1/tables/orders/rows/o1"
            #expect(try await system.gateway("gw-a", .PUT, path, body: #"{"values":{"customer":"v0"}}"#).status == 200)
            #expect(try await system.sync("gw-a", table: "orders").status == 200)
            _ = try await system.awaitChange(on: "gw-b", table: "orders", "o1")
            // B's change, on version 1, stamped half a minute on (its clock a little ahead, within
            // the cloud's margin), then A's, stamped a decade on: A's reaches the cloud first.
            let soon = #"{"updated_at":\#(now + 30_000),"values":{"customer":"B, later"}}"#
            #expect(try await system.gateway("gw-b", .PUT, path, body: soon).status == 200)
            let ahead = #"{"updated_at":\#(decade),"values":{"customer":"A, clock ahead"}}"#
            #expect(try await system.gateway("gw-a", .PUT, path, body: ahead).status == 200)
            #expect(try await system.sync("gw-a", table: "orders").json["accepted"]?.int == 1)
            #expect(try await system.sync("gw-b", table: "orders").json["conflicts"]?.int == 1)
            let conflict = try await system.gateway("gw-b", .GET, "/v1/conflicts?all=true").json["conflicts"]?.array?.first
            try #require(conflict?["winner"]?.string == "client")
            #expect((conflict?["server"]?["updated_at"]?.int ?? decade) < decade)
            let onA = try await system.awaitChange(on: "gw-a", table: "orders", "o1") { $0["version"]?.int == 3 }
            #expect(onA["values"]?["customer"]?.string == "B, later")

            let admin = [("Authorization", "Bearer \(SyncSystem.cloudAdmin)")]
            let stats = try await system.cloudRequest(.GET, "/stats", as: nil, headers: admin)
            #expect(stats.json["batches"]?["clock_ahead_changes"]?.int == 1)
            let metrics = try await system.cloudRequest(.GET, "/metrics", as: nil, headers: admin)
            #expect(metrics.body.contains(#"dally_cloud_clock_ahead_changes_total{gateway="gw-a"} 1"#), "\(metrics.body)")
        }
    }

    @Test func manualKeepsBothSidesUntilAnAppResolves() async throws {
        try await SyncSystem.run { system in
            _ = try await diverge(
                system, table: "docs", "d1", created: #"{"values":{"text":"v0","rev":0}}"#,
                onA: #"{"values":{"text":"A's text","rev":1}}"#, onB: #"{"values":{"text":"B's text","rev":1}}"#)
            // B keeps its own change aside (not sent again) and lists the conflict with both sides.
            let open = try await system.gateway("gw-b", .GET, "/v1/conflicts?table=docs").json["conflicts"]?.array ?? []
            #expect(open.count == 1)
            let conflict = try #require(open.first)
            #expect(conflict["status"]?.string == "open")
            #expect(conflict["policy"]?.string == "manual")
            #expect(conflict["server"]?["values"]?["text"]?.string == "A's text")
            #expect(conflict["local"]?["values"]?["text"]?.string == "B's text")
            #expect(try await system.sync("gw-b", table: "docs").json["sent"]?.int == 0)

            // The app merges and writes the result: it goes up based on the cloud's version.
            let resolved = try await system.gateway(
                "gw-b", .POST, "/v1/conflicts/docs/d1", body: #"{"values":{"text":"merged","rev":2}}"#)
            #expect(resolved.status == 200)
            #expect(try await system.sync("gw-b", table: "docs").json["accepted"]?.int == 1)
            let onA = try await system.awaitChange(on: "gw-a", table: "docs", "d1") { $0["values"]?["text"]?.string == "merged" }
            #expect(onA["version"]?.int == 3)
            #expect(try await system.gateway("gw-b", .GET, "/v1/conflicts").json["conflicts"]?.array?.isEmpty == true)
        }
    }

    @Test func manualResolvedByTakingTheServerSide() async throws {
        try await SyncSystem.run { system in
            _ = try await diverge(
                system, table: "docs", "d2", created: #"{"values":{"text":"v0"}}"#, onA: #"{"values":{"text":"A"}}"#,
                onB: #"{"values":{"text":"B"}}"#)
            let taken = try await system.gateway("gw-b", .POST, "/v1/conflicts/docs/d2", body: #"{"take":"server"}"#)
            #expect(taken.status == 200)
            #expect(taken.json["values"]?["text"]?.string == "A")
            #expect(taken.json["version"]?.int == 2)
            #expect(try await system.sync("gw-b", table: "docs").json["sent"]?.int == 0)
            let again = try await system.gateway("gw-b", .POST, "/v1/conflicts/docs/d2", body: #"{"take":"server"}"#)
            #expect(again.status == 404)
        }
    }
}
