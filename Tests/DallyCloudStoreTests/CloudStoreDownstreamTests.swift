import DallyCore
import DallySync
import Foundation
import DallyTestSupport
import Testing

@testable import DallyCloudStore

@Suite("Cloud store: downstream pages")
struct CloudStoreDownstreamTests {
    /// Replica A writes a1, a2; B writes b1; A writes a3: orders versions 1…4.
    func writeFromTwoReplicas(_ cloud: any CloudStore) async throws {
        _ = try await cloud.send(cloudBatch("a1", [cloudSection("orders", ["customer"], [cloudPut("a1", ["A1"]), cloudPut("a2", ["A2"])])]))
        _ = try await cloud.send(
            cloudBatch("b1", gateway: "gw-b", replica: "rep-b", [cloudSection("orders", ["customer"], [cloudPut("b1", ["B1"])])]))
        _ = try await cloud.send(cloudBatch("a2", [cloudSection("orders", ["customer"], [cloudPut("a3", ["A3"])])]))
    }

    @Test(arguments: Backend.allCases) func changesComeInVersionOrderLeavingOutTheAskingReplicasOwn(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        try await writeFromTwoReplicas(cloud)
        let all = try await cloud.changes(table: "orders", since: 0, limit: 10, excludingReplica: nil)
        #expect(all.rows.map(\.id) == ["a1", "a2", "b1", "a3"])
        #expect(all.rows.map(\.version) == [1, 2, 3, 4])
        #expect(all.since == 0)
        #expect(all.version == 4)
        #expect(!all.more)

        let forA = try await cloud.changes(table: "orders", since: 0, limit: 10, excludingReplica: originA)
        #expect(forA.rows.map(\.id) == ["b1"])
        // The cursor passes A's own rows: nothing after it is left for A.
        #expect(forA.version == 4)
        #expect(!forA.more)

        let forB = try await cloud.changes(table: "orders", since: 0, limit: 10, excludingReplica: originB)
        #expect(forB.rows.map(\.id) == ["a1", "a2", "a3"])
        #expect(forB.version == 4)

        let fromTwo = try await cloud.changes(table: "orders", since: 2, limit: 10, excludingReplica: originB)
        #expect(fromTwo.rows.map(\.id) == ["a3"])
        #expect(fromTwo.since == 2)

        #expect(try await cloud.hasChanges(table: "orders", since: 0, excludingReplica: originA))
        #expect(try await !cloud.hasChanges(table: "orders", since: 3, excludingReplica: originA))
        #expect(try await cloud.hasChanges(table: "orders", since: 3, excludingReplica: originB))
        #expect(try await cloud.hasChanges(table: "orders", since: 3, excludingReplica: nil))
        #expect(try await !cloud.hasChanges(table: "orders", since: 4, excludingReplica: nil))
        #expect(try await !cloud.hasChanges(table: "notes", since: 0, excludingReplica: nil))
    }

    @Test(arguments: Backend.allCases) func aReplicaIsKnownByItsGatewayTooSoAnotherGatewayCannotHideItsRows(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        try await writeFromTwoReplicas(cloud)
        // Gateway X sends with the same replica id as A's.
        _ = try await cloud.send(
            cloudBatch("x1", gateway: "gw-x", replica: "rep-a", [cloudSection("orders", ["customer"], [cloudPut("x1", ["X"])])]))
        let forA = try await cloud.changes(table: "orders", since: 0, limit: 10, excludingReplica: originA)
        #expect(forA.rows.map(\.id) == ["b1", "x1"])
        #expect(try await cloud.hasChanges(table: "orders", since: 4, excludingReplica: originA))
    }

    @Test(arguments: Backend.allCases) func aRowChangedByAnotherReplicaIsNoLongerLeftOut(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        try await writeFromTwoReplicas(cloud)
        _ = try await cloud.send(
            cloudBatch("b2", gateway: "gw-b", replica: "rep-b", [cloudSection("orders", ["customer"], [cloudPut("a1", base: 1, ["B over A1"])])]))
        let forA = try await cloud.changes(table: "orders", since: 0, limit: 10, excludingReplica: originA)
        #expect(forA.rows.map(\.id) == ["b1", "a1"])
        #expect(forA.rows.map(\.version) == [3, 5])
    }

    @Test(arguments: Backend.allCases) func theCursorIsTheLastRowWhileMoreRemainsAndThenTheTableVersion(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        try await writeFromTwoReplicas(cloud)
        let first = try await cloud.changes(table: "orders", since: 0, limit: 2, excludingReplica: nil)
        #expect(first.rows.map(\.version) == [1, 2])
        #expect(first.more)
        #expect(first.version == 2)

        let second = try await cloud.changes(table: "orders", since: first.version, limit: 2, excludingReplica: nil)
        #expect(second.rows.map(\.version) == [3, 4])
        #expect(!second.more)
        #expect(second.version == 4)

        let third = try await cloud.changes(table: "orders", since: second.version, limit: 2, excludingReplica: nil)
        #expect(third.rows.isEmpty)
        #expect(!third.more)
        #expect(third.version == 4)

        // Excluding B, with one row a page: a1, a2, then a3 (b1 is skipped, not counted).
        let one = try await cloud.changes(table: "orders", since: 0, limit: 1, excludingReplica: originB)
        #expect(one.rows.map(\.id) == ["a1"])
        #expect(one.more)
        #expect(one.version == 1)
        let rest = try await cloud.allChanges("orders", excluding: originB, pageSize: 1)
        #expect(rest.map(\.id) == ["a1", "a2", "a3"])

        // Excluding A, the one foreign row is followed by A's own: nothing more for A.
        let forA = try await cloud.changes(table: "orders", since: 0, limit: 1, excludingReplica: originA)
        #expect(forA.rows.map(\.id) == ["b1"])
        #expect(!forA.more)
        #expect(forA.version == 4)
    }

    @Test(arguments: Backend.allCases) func anUnknownTableIsRefused(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        do {
            _ = try await cloud.changes(table: "nope", since: 0, limit: 10, excludingReplica: nil)
            Issue.record("changes of an unknown table were served")
        } catch let error as DallyError {
            #expect(error.code == .unknownTable)
        }
        #expect(try await !cloud.hasChanges(table: "nope", since: 0, excludingReplica: nil))
    }

    @Test(arguments: Backend.allCases) func twoThousandFiveHundredRowsOfOneBatchReadInPagesOfAThousandLoseNoneAndRepeatNone(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let ids = (0..<2_500).map { String(format: "row-%04d", $0) }
        let answer = try await cloud.send(
            cloudBatch(
                "big", gateway: "gw-b", replica: "rep-b",
                [cloudSection("notes", ["body"], ids.map { cloudPut($0, at: 1_234, [.string("body of \($0)")]) })]))
        #expect(answer.allRows.count == 2_500)
        #expect(cloud.versions["notes"] == 2_500)

        for excluding in [nil, originA] as [String?] {
            var pages: [ChangePage] = []
            var since: Int64 = 0
            repeat {
                let page = try await cloud.changes(table: "notes", since: since, limit: 1_000, excludingReplica: excluding)
                pages.append(page)
                since = page.version
            } while pages.last!.more && pages.count < 10
            #expect(pages.map(\.rows.count) == [1_000, 1_000, 500])
            #expect(pages.map(\.version) == [1_000, 2_000, 2_500])
            #expect(pages.map(\.more) == [true, true, false])
            let rows = pages.flatMap(\.rows)
            #expect(rows.map(\.version) == Array(1...2_500))
            #expect(Set(rows.map(\.id)) == Set(ids))
            #expect(rows.allSatisfy { $0.updatedAt == 1_234 && $0.values == [.string("body of \($0.id)")] })
        }
        // The writer itself is sent none of them.
        let own = try await cloud.changes(table: "notes", since: 0, limit: 1_000, excludingReplica: originB)
        #expect(own.rows.isEmpty)
        #expect(own.version == 2_500)
    }

    @Test(arguments: Backend.allCases) func theAnswerCarriesOnePageAcrossTablesWithoutTheSendersRows(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        // Another replica wrote three orders and two notes.
        _ = try await cloud.send(
            cloudBatch(
                "x1", gateway: "gw-x", replica: "rep-x",
                [
                    cloudSection("orders", ["customer"], [cloudPut("o1", ["x"]), cloudPut("o2", ["x"]), cloudPut("o3", ["x"])]),
                    cloudSection("notes", ["body"], [cloudPut("n1", ["x"]), cloudPut("n2", ["x"])]),
                ]))
        // B sends its own order, holding nothing yet, with room for four rows.
        let answer = try await cloud.send(
            cloudBatch(
                "b1", gateway: "gw-b", replica: "rep-b", since: [("orders", 0), ("notes", 0), ("sw", 0), ("nope", 0)],
                [cloudSection("orders", ["customer"], [cloudPut("b1", ["mine"])])]),
            pageRows: 4)
        #expect(answer.allRows == [.accepted(id: "b1", version: 4)])
        // sw has nothing after 0 and nope does not exist: no pages for them.
        #expect(answer.changes.map(\.table) == ["orders", "notes"])
        let ordersPage = answer.changes[0]
        #expect(ordersPage.rows.map(\.id) == ["o1", "o2", "o3"])
        #expect(ordersPage.version == 4)
        #expect(!ordersPage.more)
        #expect(ordersPage.columns == ["customer", "total", "paid"])
        let notesPage = answer.changes[1]
        #expect(notesPage.rows.map(\.id) == ["n1"])
        #expect(notesPage.more)
        #expect(notesPage.version == 1)
        #expect(answer.changes.reduce(0) { $0 + $1.rows.count } == 4)
    }

    @Test(arguments: Backend.allCases) func aBatchWithNoSectionsIsAPurePullAndIsNotRecorded(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        _ = try await cloud.send(
            cloudBatch("x1", gateway: "gw-x", replica: "rep-x", [cloudSection("notes", ["body"], [cloudPut("n1", ["x"])])]))
        #expect(try await cloud.statistics().storedAnswers == 1)
        let pull = cloudBatch("pull-1", gateway: "gw-b", replica: "rep-b", since: [("notes", 0), ("orders", 0)], [])
        let answer = try await cloud.send(pull)
        #expect(!answer.replayed)
        #expect(answer.results.isEmpty)
        #expect(answer.changes.map(\.table) == ["notes"])
        #expect(answer.changes.first?.rows.map(\.id) == ["n1"])
        #expect(answer.changes.first?.version == 1)
        // Only x1's answer is on record.
        #expect(try await cloud.statistics().storedAnswers == 1)
        // Pulled again, it is answered afresh, not from a record.
        #expect(try await !cloud.send(pull).replayed)
    }

    @Test(arguments: Backend.allCases) func anExhaustedPageBudgetLeavesLaterTablesAtTheirCursor(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        _ = try await cloud.send(
            cloudBatch(
                "x1", gateway: "gw-x", replica: "rep-x",
                [
                    cloudSection("orders", ["customer"], [cloudPut("o1", ["x"]), cloudPut("o2", ["x"]), cloudPut("o3", ["x"])]),
                    cloudSection("notes", ["body"], [cloudPut("n1", ["x"]), cloudPut("n2", ["x"])]),
                ]))
        let answer = try await cloud.send(
            cloudBatch("b1", gateway: "gw-b", replica: "rep-b", since: [("orders", 1), ("notes", 0)], []), pageRows: 2)
        #expect(answer.changes.reduce(0) { $0 + $1.rows.count } <= 2)
        let ordersPage = try #require(answer.changes.first { $0.table == "orders" })
        #expect(ordersPage.rows.map(\.id) == ["o2", "o3"])
        #expect(ordersPage.since == 1)
        #expect(ordersPage.version == 3)
        // Later tables still get a page, empty, its cursor left where it was.
        let notesPage = try #require(answer.changes.first { $0.table == "notes" })
        #expect(notesPage.rows.isEmpty)
        #expect(notesPage.since == 0)
        #expect(notesPage.version == 0)
        #expect(notesPage.more)
    }

    @Test(arguments: Backend.allCases) func aReplayedAnswerCarriesTheChangesAsTheyAreNow(_ backend: Backend) async throws {
        let cloud = try await openCloud(backend)
        defer { try? cloud.close() }
        let batch = cloudBatch(
            "b1", gateway: "gw-b", replica: "rep-b", since: [("notes", 0)], [cloudSection("notes", ["body"], [cloudPut("mine", ["b"])])])
        let first = try await cloud.send(batch)
        #expect(first.changes.map(\.rows.count) == [0])
        #expect(first.changes.first?.version == 1)
        _ = try await cloud.send(cloudBatch("x1", gateway: "gw-x", replica: "rep-x", [cloudSection("notes", ["body"], [cloudPut("theirs", ["x"])])]))
        let replay = try await cloud.send(batch)
        #expect(replay.replayed)
        #expect(replay.changes.first?.rows.map(\.id) == ["theirs"])
        #expect(replay.changes.first?.version == 2)
    }
}
