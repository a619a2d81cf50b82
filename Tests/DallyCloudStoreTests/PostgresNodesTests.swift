@testable import DallyCloudPostgres
import DallyConfig
import DallyCore
import DallySync
import DallyTestSupport
import Foundation
import PostgresNIO
import Testing

/// What only a store shared by several nodes must get right: two `PostgresCloudStore`s over
/// one database stand for two `dally cloud` nodes.
@Suite("PostgreSQL store: several nodes over one database")
struct PostgresNodesTests {
    static func nodes(_ count: Int, tables: [TableSchema] = cloudTables) async throws
        -> (PostgresSettings, [PostgresCloudStore])
    {
        let database = try await offPool { try PostgresCluster.shared().createDatabase() }
        // Opened at once: the migrations must serialise on their advisory lock.
        let stores = try await withThrowingTaskGroup(of: PostgresCloudStore.self) { group in
            for _ in 0..<count {
                group.addTask { try await PostgresCloudStore.open(database, tables: tables, logger: quietLogger) }
            }
            var stores: [PostgresCloudStore] = []
            for try await store in group { stores.append(store) }
            return stores
        }
        return (database, stores)
    }

    @Test func nodesStartingTogetherMigrateOnceAndAgree() async throws {
        let (_, stores) = try await Self.nodes(4)
        defer { for store in stores { try? store.close() } }
        for store in stores { #expect(store.versions == ["orders": 0, "notes": 0, "sw": 0, "cw": 0, "lww": 0, "man": 0]) }
    }

    @Test func theSameBatchSentToTwoNodesAtOnceIsAppliedOnceWithTheSameResults() async throws {
        let (_, stores) = try await Self.nodes(2)
        defer { for store in stores { try? store.close() } }
        for round in 0..<10 {
            let batch = cloudBatch(
                "twice-\(round)",
                [cloudSection("orders", ["customer"], (0..<20).map { cloudPut("r\(round)-\($0)", ["x"]) })])
            async let one = stores[0].send(batch)
            async let two = stores[1].send(batch)
            let answers = try await [one, two]
            #expect(answers[0].results == answers[1].results)
            #expect(answers.filter(\.replayed).count == 1)
        }
        let rows = try await stores[0].allChanges("orders")
        #expect(rows.count == 200)
        #expect(rows.map(\.version) == Array(1...200))
        #expect(try await stores[1].statistics().storedAnswers == 10)
    }

    @Test func batchesOnTwoNodesAtOnceNeverShareAVersionAndAReaderMissesNone() async throws {
        let (_, stores) = try await Self.nodes(2)
        defer { for store in stores { try? store.close() } }
        let perNode = 30
        // A reader pages behind the writers the whole time, as a gateway would.
        let reader = Task {
            var seen: [String: Int64] = [:]
            var since: Int64 = 0
            var reads = 0
            // Bounded, so that a lost row fails the test rather than hanging it.
            while seen.count < 2 * perNode * 5, reads < 20_000 {
                reads += 1
                let page = try await stores[1].changes(table: "orders", since: since, limit: 7, excludingReplica: nil)
                for row in page.rows { seen[row.id] = row.version }
                since = page.version
            }
            return seen
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, store) in stores.enumerated() {
                group.addTask {
                    for b in 0..<perNode {
                        let answer = try await store.send(
                            cloudBatch(
                                "n\(n)-b\(b)", gateway: "gw-\(n)", replica: "rep",
                                [cloudSection("orders", ["customer"], (0..<5).map { cloudPut("n\(n)-\(b)-\($0)", ["x"]) })]))
                        #expect(answer.allRows.allSatisfy { if case .accepted = $0 { true } else { false } })
                    }
                }
            }
            try await group.waitForAll()
        }
        let seen = try await reader.value
        #expect(seen.count == 2 * perNode * 5)
        #expect(Set(seen.values).count == seen.count)
        #expect(try await stores[0].allChanges("orders").map(\.version) == Array(1...Int64(2 * perNode * 5)))
    }

    /// A batch rules on its changes before it locks its table's counter; a row another node
    /// writes in between must be read again under the lock, or the batch would overwrite a
    /// change it never saw. Here "another node" is a transaction of the test's that holds the
    /// counter while the batch rules, writes the row as a batch would, and commits once the
    /// batch waits for the lock.
    @Test func aRowChangedWhileTheBatchWaitsForTheLockIsRuledOnAsItIsAtTheLock() async throws {
        let (_, stores) = try await Self.nodes(1)
        let node = stores[0]
        defer { try? node.close() }
        _ = try await node.send(cloudBatch("b1", [cloudSection("sw", ["body", "n"], [cloudPut("r1", ["first", 1])])]))

        let held = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await node.access.transaction { connection in
                try await connection.query("SELECT 1 FROM cloud_tables WHERE tbl = 'sw' FOR UPDATE", logger: quietLogger)
                held.continuation.yield()
                // Until the batch is waiting for this lock, having ruled on r1 at version 1.
                let waiting = try await eventually(within: .seconds(60)) {
                    try await node.access.withConnection { other in
                        let rows = try await other.query(
                            "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'",
                            logger: quietLogger)
                        for try await count in rows.decode(Int64.self) { return count > 0 }
                        return false
                    }
                }
                #expect(waiting)
                try await connection.query(
                    """
                    UPDATE "t_sw" SET version = 2, updated_at = 2000, origin = 'elsewhere/rep', batch = 'x',                     "c_body" = 'theirs' WHERE id = 'r1'
                    """, logger: quietLogger)
                try await connection.query("UPDATE cloud_tables SET version = 2 WHERE tbl = 'sw'", logger: quietLogger)
            }
        }
        for await _ in held.stream { break }
        let answer = try await node.send(
            cloudBatch("b2", [cloudSection("sw", ["body", "n"], [cloudPut("r1", base: 1, at: 3_000, ["mine", 2])])]))
        try await holder.value

        let server = ChangePage.ChangedRow(id: "r1", version: 2, updatedAt: 2000, deleted: false, values: ["theirs", 1])
        #expect(
            answer.allRows == [
                .conflict(id: "r1", BatchAnswer.Conflict(policy: .serverWins, winner: .server, version: 2, server: server))
            ])
        #expect(try await node.allChanges("sw").map(\.values) == [["theirs", 1]])
        #expect(node.versions["sw"] == 2)
    }

    @Test func aCommitOnOneNodeReachesTheOtherNodesObserversByNotify() async throws {
        let (_, stores) = try await Self.nodes(2)
        defer { for store in stores { try? store.close() } }
        let recorder = CommitRecorder()
        stores[1].observeCommits { recorder.record($0) }
        // Whether or not node 2's listener was up yet, it reads the versions once it is, so the
        // first commit is heard either way.
        _ = try await stores[0].send(cloudBatch("n1", [cloudSection("notes", ["body"], [cloudPut("a", ["hi"])])]))
        #expect(await eventually { stores[1].versions["notes"] == 1 })
        #expect(recorder.recorded.contains(["notes": 1]))

        // Now it listens: the next commit arrives by NOTIFY (node 2 reads the versions
        // only when its listener connects). How fast is a benchmark's question, not a test's: a loaded machine is slow.
        _ = try await stores[0].send(cloudBatch("n2", [cloudSection("notes", ["body"], [cloudPut("b", ["hi"])])]))
        #expect(await eventually(within: .seconds(60)) { stores[1].versions["notes"] == 2 })
        #expect(recorder.recorded.last == ["notes": 2])
    }

    @Test func aDatabaseLostWhileRunningIsUnavailableAndTheStoreComesBackOnItsOwn() async throws {
        // A cluster of its own: this one is stopped under the store.
        let cluster = try await offPool { try PostgresCluster.start() }
        defer { cluster.stop() }
        let database = try await offPool { try cluster.createDatabase() }
        let node = try await PostgresCloudStore.open(database, tables: cloudTables, logger: quietLogger)
        let other = try await PostgresCloudStore.open(database, tables: cloudTables, logger: quietLogger)
        defer {
            try? node.close()
            try? other.close()
        }
        _ = try await node.send(cloudBatch("before", [cloudSection("notes", ["body"], [cloudPut("a", ["1"])])]))

        try await offPool { try cluster.stopServer() }
        // The node's listener notices first, and from then on the node refuses at once.
        #expect(await eventually { !node.access.reachability.isReachable })
        await #expect {
            try await node.send(cloudBatch("during", [cloudSection("notes", ["body"], [cloudPut("b", ["2"])])]))
        } throws: { error in
            (error as? DallyError)?.code == .storeUnavailable
        }
        try await offPool { try cluster.startServer() }

        // The same batch, resent until the pool has reconnected, applies once.
        let during = cloudBatch("during", [cloudSection("notes", ["body"], [cloudPut("b", ["2"])])])
        #expect(await eventually { (try? await node.send(during)) != nil })
        #expect(try await node.allChanges("notes").map(\.id) == ["a", "b"])
        // The other node's listener reconnected and re-read the versions it missed.
        #expect(await eventually { other.versions["notes"] == 2 })
        _ = try await node.send(cloudBatch("after", [cloudSection("notes", ["body"], [cloudPut("c", ["3"])])]))
        #expect(await eventually { other.versions["notes"] == 3 })
    }

    @Test func anUnreachableDatabaseIsRefusedAtOpenNamingHostAndPort() async throws {
        let port = try FreePort.find()
        let settings = PostgresSettings(host: "127.0.0.1", port: port, username: "dally", database: "none")
        await #expect {
            _ = try await PostgresCloudStore.open(settings, tables: cloudTables, logger: quietLogger)
        } throws: { error in
            guard let error = error as? PostgresStoreError else { return false }
            return error.unreachable && error.message.contains("127.0.0.1:\(port)")
        }
    }

    @Test func aConfigurationThatDropsAColumnIsRefusedAsOnSQLite() async throws {
        let (database, stores) = try await Self.nodes(1)
        try stores[0].close()
        let narrower = table("orders", [("customer", .text)])
        await #expect {
            _ = try await PostgresCloudStore.open(database, tables: [narrower] + cloudTables.filter { $0.name != "orders" }, logger: quietLogger)
        } throws: { error in
            (error as? PostgresStoreError)?.message.contains("column 'orders.total'") == true
        }
    }
}

@Suite("CommitListener and RecentCommits: what a node hears of commits")
struct RecentCommitsTests {
    typealias Commit = RecentCommits.Commit

    @Test func commitsSurviveThePayloadAndForeignPayloadsAreIgnored() {
        let commits = [
            Commit(table: "orders", after: 40, upTo: 42, origin: "gw-a/r1"), Commit(table: "notes", after: 6, upTo: 7, origin: "gw-a/r1"),
        ]
        let payload = CommitListener.payload(commits)
        #expect(payload == #"{"notes":[6,7,"gw-a/r1"],"orders":[40,42,"gw-a/r1"]}"#)
        #expect(CommitListener.commits(payload) == commits.sorted { $0.table < $1.table })
        #expect(CommitListener.commits("hello") == nil)
        #expect(CommitListener.commits(#"{"orders":42}"#) == nil)
    }

    @Test func aForeignCommitPastTheCursorIsFoundFromMemory() {
        var recent = RecentCommits()
        recent.record(Commit(table: "t", after: 0, upTo: 3, origin: "a"))
        recent.record(Commit(table: "t", after: 5, upTo: 6, origin: "a"))
        // Heard out of order (another node's commit arrived after this node's own).
        recent.record(Commit(table: "t", after: 3, upTo: 5, origin: "b"))
        recent.record(Commit(table: "t", after: 5, upTo: 6, origin: "a"))
        #expect(recent.foreignChange(table: "t", since: 0, current: 6, excluding: "a") == true)
        #expect(recent.foreignChange(table: "t", since: 5, current: 6, excluding: "a") == false)
        #expect(recent.foreignChange(table: "t", since: 5, current: 6, excluding: "b") == true)
        #expect(recent.foreignChange(table: "t", since: 6, current: 6, excluding: "b") == false)
    }

    @Test func whatTheCommitsKeptDoNotCoverIsLeftToTheDatabase() {
        var recent = RecentCommits()
        recent.record(Commit(table: "t", after: 10, upTo: 12, origin: "a"))
        recent.record(Commit(table: "t", after: 14, upTo: 15, origin: "a"))
        #expect(recent.foreignChange(table: "t", since: 5, current: 15, excluding: "a") == nil)
        #expect(recent.foreignChange(table: "t", since: 12, current: 15, excluding: "a") == nil)
        #expect(recent.foreignChange(table: "t", since: 14, current: 16, excluding: "a") == nil)
        #expect(recent.foreignChange(table: "u", since: 0, current: 1, excluding: "a") == nil)
        #expect(recent.foreignChange(table: "t", since: 14, current: 15, excluding: "a") == false)
    }
}
