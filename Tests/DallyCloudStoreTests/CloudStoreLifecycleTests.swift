import DallyCore
import DallySync
import Foundation
import DallyTestSupport
import Testing

@Suite("Cloud store: tombstone compaction, horizons and resync pages")
struct CloudStoreLifecycleTests {
    /// orders: a1 (v1), a2 (v2), b1 from B (v3), then a1 and a2 deleted by B (v4, v5, at 2,000).
    func stage(_ cloud: any CloudStore) async throws {
        _ = try await cloud.send(cloudBatch("a1", [cloudSection("orders", ["customer"], [cloudPut("a1", ["A1"]), cloudPut("a2", ["A2"])])]))
        _ = try await cloud.send(
            cloudBatch("b1", gateway: "gw-b", replica: "rep-b", [cloudSection("orders", ["customer"], [cloudPut("b1", ["B1"])])]))
        _ = try await cloud.send(
            cloudBatch(
                "b2", gateway: "gw-b", replica: "rep-b",
                [cloudSection("orders", [], [cloudDelete("a1", base: 1, at: 2_000), cloudDelete("a2", base: 2, at: 2_000)])]))
    }

    @Test(arguments: Backend.allCases) func purgingRaisesTheHorizonAndOnlyTakesOldTombstonesUpToTheBound(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        try await stage(cloud)
        // Too young, then held back by a gateway at version 4.
        #expect(try await cloud.purgeTombstones(table: "orders", upTo: .max, before: 2_000) == 0)
        #expect(try await cloud.purgeTombstones(table: "orders", upTo: 4, before: 3_000) == 1)
        var statistics = try await cloud.statistics()
        #expect(statistics.tables["orders"]?.horizon == 4)
        #expect(statistics.tables["orders"]?.tombstones == 1)
        #expect(try await cloud.purgeTombstones(table: "orders", upTo: .max, before: 3_000) == 1)
        statistics = try await cloud.statistics()
        #expect(statistics.tables["orders"]?.horizon == 5)
        #expect(statistics.tables["orders"]?.live == 1)
        #expect(try await cloud.allChanges("orders").map(\.id) == ["b1"])
    }

    @Test(arguments: Backend.allCases) func aCursorBehindTheHorizonGetsAResyncPageWithItsOwnRows(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        try await stage(cloud)
        _ = try await cloud.send(cloudBatch("a2", [cloudSection("orders", ["customer"], [cloudPut("a3", ["A3"])])]))
        _ = try await cloud.purgeTombstones(table: "orders", upTo: .max, before: 3_000)

        let stale = try await cloud.changes(table: "orders", since: 2, limit: 10, excludingReplica: originA)
        #expect(stale.resync)
        #expect(stale.since == 0)
        // A's own a3 is in: a gateway pulling from scratch removes every clean row it is not sent.
        #expect(stale.rows.map(\.id) == ["b1", "a3"])
        #expect(stale.version == 6)

        let paging = try await cloud.changes(table: "orders", since: 3, limit: 10, excludingReplica: originA, resyncing: true)
        #expect(!paging.resync)
        #expect(paging.rows.map(\.id) == ["a3"])

        let current = try await cloud.changes(table: "orders", since: 5, limit: 10, excludingReplica: originA)
        #expect(!current.resync)
        #expect(current.rows.isEmpty)

        // The same rule holds for the page on a batch answer.
        let pull = try await cloud.send(cloudBatch("a3", since: [("orders", 1)], []))
        #expect(pull.changes.first?.resync == true)
        var resyncing = cloudBatch("a4", since: [("orders", 1)], [])
        resyncing.resyncing = ["orders"]
        let paged = try await cloud.send(resyncing)
        #expect(paged.changes.first?.resync == false)
        #expect(paged.changes.first?.rows.map(\.id) == ["b1", "a3"])
    }

    @Test(arguments: Backend.allCases) func aCursorAheadOfTheCloudOrGoneBackGetsAResyncPage(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        try await stage(cloud)
        let ahead = try await cloud.changes(table: "orders", since: 40, limit: 10, excludingReplica: originA)
        #expect(ahead.resync)
        #expect(ahead.rows.map(\.id) == ["b1", "a1", "a2"])
        let aheadOnAnswer = try await cloud.send(cloudBatch("p1", since: [("orders", 40)], []))
        #expect(aheadOnAnswer.changes.first?.resync == true)

        var back = cloudBatch("p2", since: [("orders", 2)], [])
        back.regressed = ["orders"]
        let answer = try await cloud.send(back)
        #expect(answer.changes.first?.resync == true)
        #expect(answer.changes.first?.rows.count == 3)
    }

    @Test(arguments: Backend.allCases) func gatewayCursorsKeepTheLatestSighting(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        try await cloud.recordCursors([
            GatewayCursor(gateway: "gw-a", table: "orders", version: 5, seenAt: 2_000),
            GatewayCursor(gateway: "gw-b", table: "orders", version: 3, seenAt: 2_000),
        ])
        try await cloud.recordCursors([
            GatewayCursor(gateway: "gw-a", table: "orders", version: 4, seenAt: 1_000),
            GatewayCursor(gateway: "gw-b", table: "orders", version: 9, seenAt: 3_000),
        ])
        #expect(
            try await cloud.gatewayCursors() == [
                GatewayCursor(gateway: "gw-a", table: "orders", version: 5, seenAt: 2_000),
                GatewayCursor(gateway: "gw-b", table: "orders", version: 9, seenAt: 3_000),
            ])
    }

    @Test(arguments: Backend.allCases) func toldDeclarationsKeepTheLatestOfEachGateway(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        func told(_ gateway: String, _ document: String, at toldAt: Int64) -> ToldDocument {
            ToldDocument(gateway: gateway, document: Array(document.utf8), toldAt: toldAt)
        }
        #expect(try await cloud.toldDeclarations().isEmpty)
        try await cloud.recordDeclarations(told("gw-b", #"{"tables":[]}"#, at: 2_000))
        try await cloud.recordDeclarations(told("gw-a", #"{"tables":[{"name":"orders"}]}"#, at: 2_000))
        // A later telling replaces the earlier; one heard late by another node does not.
        try await cloud.recordDeclarations(told("gw-b", #"{"tables":[{"name":"photos"}]}"#, at: 3_000))
        try await cloud.recordDeclarations(told("gw-a", #"{"tables":[]}"#, at: 1_000))
        #expect(
            try await cloud.toldDeclarations() == [
                told("gw-a", #"{"tables":[{"name":"orders"}]}"#, at: 2_000),
                told("gw-b", #"{"tables":[{"name":"photos"}]}"#, at: 3_000),
            ])
    }
}
