import DallyCore
import DallySync
import Foundation
import Testing

@testable import DallyCloudStore
import DallyTestSupport
@testable import DallyStore

@Suite("Replica sync: outgoing batches and answers")
struct ReplicaSyncBatchTests {
    let clock = FixedClock(1_000_000)
    let directory = temporaryDirectory()
    let store: ReplicaStore

    init() throws {
        let clock = self.clock
        store = try ReplicaStore.open(directory: directory, tables: [orders, notes], now: { clock.now })
    }

    @Test func nothingPendingMeansNoBatch() async throws {
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100)?.batchID == nil)
    }

    @Test func aWriteGoesOutInTheNextBatchWhichIsKeptUntilAnswered() async throws {
        _ = try await store.write(put("o1", [(0, .text("Ada")), (1, .real(12.5))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw-east", maxRows: 100))
        #expect(!batch.resent)
        #expect(batch.rows == 1)

        let request = try sentRequest(batch)
        #expect(request.batchID == batch.batchID)
        #expect(BatchRequest.isValidToken(batch.batchID))
        #expect(request.gateway == "gw-east")
        #expect(request.replica == store.replicaID)
        #expect(BatchRequest.isValidToken(store.replicaID))
        #expect(request.since == TableVersions([("notes", 0), ("orders", 0)]))
        #expect(
            request.sections == [
                BatchRequest.Section(
                    table: "orders", columns: ["customer", "total", "paid"],
                    changes: [
                        BatchRequest.Change(
                            id: "o1", baseVersion: nil, updatedAt: 1_000_000, deleted: false, values: ["Ada", 12.5, nil])
                    ])
            ])

        // Asked again, even after more writes, the same batch goes out unchanged.
        _ = try await store.write(put("o2", [(0, .text("Bea"))]), table: "orders")
        let again = try #require(try await store.nextBatch(gateway: "gw-east", maxRows: 100))
        #expect(again.batchID == batch.batchID)
        #expect(again.body == batch.body)
        #expect(again.rows == 1)
        #expect(again.resent)
    }

    @Test func aBatchRecordedBeforeBatchesNamedTheirTablesIsReadFromItsBody() async throws {
        _ = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        // As a replica older than the `uploads` and `pulls` columns recorded it: no tables, the
        // body as JSON.
        try await store.pool.write { db in
            try db.execute(
                sql: "UPDATE dally_inflight SET uploads = NULL, pulls = NULL, body = ?", arguments: [Data(batch.body)])
        }

        let flight = try #require(try await store.syncBacklog().inFlight.first)
        #expect(flight.batchID == batch.batchID)
        #expect(flight.uploads == ["orders"])
        #expect(flight.pulls == ["notes", "orders"])
        // Its tables known, it goes out again whole where they may go, and not where they may not.
        let only = BatchScope(uploads: ["orders"], pulls: ["notes", "orders"])
        let again = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100, scope: only))
        #expect(again.batchID == batch.batchID)
        #expect(again.body == batch.body)
        #expect(again.outline == batch.outline)
        let notes = BatchScope(uploads: ["notes"], pulls: ["notes"])
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100, scope: notes) == nil)
    }

    @Test func theBatchInFlightSurvivesARestart() async throws {
        _ = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        _ = try await store.write(delete("o1"), table: "orders")
        _ = try await store.write(put("n1", [(0, .text("note"))]), table: "notes")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(batch.rows == 2)
        let request = try sentRequest(batch)
        #expect(request.sections.map(\.table) == ["notes", "orders"])
        #expect(batch.outline == BatchOutline(sections: [.init(table: "notes", ids: ["n1"]), .init(table: "orders", ids: ["o1"])]))
        #expect(request.sections[1].changes == [BatchRequest.Change(id: "o1", baseVersion: nil, updatedAt: 1_000_000, deleted: true, values: [])])
        try store.close()

        let reopened = try ReplicaStore.open(directory: directory, tables: [orders, notes], now: { 2_000_000 })
        #expect(reopened.replicaID == store.replicaID)
        let resent = try #require(try await reopened.nextBatch(gateway: "gw", maxRows: 100))
        #expect(resent.batchID == batch.batchID)
        #expect(resent.body == batch.body)
        #expect(resent.rows == 2)
        #expect(resent.resent)
        // Read from the body it kept: answers are read by position against it.
        #expect(resent.outline == batch.outline)

        // The answer applies after the restart.
        let report = try await reopened.applyAnswer(
            BatchAnswer(
                batchID: batch.batchID, replayed: true,
                results: [
                    .init(table: "notes", rows: [.accepted(id: "n1", version: 1)]),
                    .init(table: "orders", rows: [.accepted(id: "o1", version: 1)]),
                ], changes: []))
        #expect(report.accepted == 2)
        #expect(report.replayed)
        #expect(try await reopened.row(table: "orders", id: "o1")?.version == 1)
        #expect(try await reopened.nextBatch(gateway: "gw", maxRows: 100)?.batchID == nil)
        try reopened.close()
    }

    @Test func localOnlyTablesAreNeitherSentNorFollowed() async throws {
        let scratch = table("scratch", [("note", .text)], localOnly: true)
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, scratch])
        _ = try await store.write(put("s1", [(0, .text("x"))]), table: "scratch")
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100)?.batchID == nil)
        _ = try await store.write(put("o1", []), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let request = try sentRequest(batch)
        #expect(request.since == TableVersions([("orders", 0)]))
        #expect(request.sections.map(\.table) == ["orders"])
        // Pages for it are ignored too.
        let page = ChangePage(
            table: "scratch", columns: ["note"], since: 0, version: 3, more: false,
            rows: [ChangePage.ChangedRow(id: "s2", version: 3, updatedAt: 1, deleted: false, values: ["cloud"])])
        #expect(try await store.applyChanges([page]).received == 0)
        #expect(try await store.row(table: "scratch", id: "s2") == nil)
    }

    @Test func aBatchTakesAtMostMaxRowsOldestFirst() async throws {
        for i in 1...5 {
            _ = try await store.write(put("o\(i)", []), table: "orders")
            clock.advance(1)
        }
        let first = try #require(try await store.nextBatch(gateway: "gw", maxRows: 3))
        #expect(first.rows == 3)
        #expect(try sentRequest(first).sections.flatMap(\.changes).map(\.id) == ["o1", "o2", "o3"])
        _ = try await store.applyAnswer(
            replicaAnswer(first, [.accepted(id: "o1", version: 1), .accepted(id: "o2", version: 2), .accepted(id: "o3", version: 3)]))
        let second = try #require(try await store.nextBatch(gateway: "gw", maxRows: 3))
        #expect(second.batchID != first.batchID)
        #expect(try sentRequest(second).sections.flatMap(\.changes).map(\.id) == ["o4", "o5"])
    }

    @Test func anAcceptedChangeLeavesTheRowCleanAtItsVersion() async throws {
        let written = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let report = try await store.applyAnswer(replicaAnswer(batch, [.accepted(id: "o1", version: 7)]))
        #expect(report.sent == 1)
        #expect(report.accepted == 1)
        #expect(report.conflicts == 0)
        #expect(report.rejected == 0)

        let row = try #require(try await store.row(table: "orders", id: "o1"))
        #expect(row.version == 7)
        #expect(row.seq == written.seq)
        #expect(row.values == written.values)
        #expect(try await store.outboxEntries(table: "orders").isEmpty)
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100)?.batchID == nil)
    }

    @Test func anAnswerForAnotherBatchIsRefusedAndChangesNothing() async throws {
        _ = try await store.write(put("o1", []), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let stranger = BatchAnswer(
            batchID: "not-" + batch.batchID, replayed: false,
            results: [.init(table: "orders", rows: [.accepted(id: "o1", version: 1)])], changes: [])
        await #expect(throws: StoreError.self) { try await store.applyAnswer(stranger) }
        #expect(try await store.row(table: "orders", id: "o1")?.version == nil)
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100)?.batchID == batch.batchID)
    }

    @Test func aRowWrittenAgainInFlightStaysPendingOnTheNewVersion() async throws {
        _ = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        _ = try await store.write(put("o2", [(0, .text("Bea"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        clock.advance(10)
        let rewritten = try await store.write(patch("o1", [(1, .real(3))]), table: "orders")

        _ = try await store.applyAnswer(replicaAnswer(batch, [.accepted(id: "o1", version: 7), .accepted(id: "o2", version: 8)]))
        let row = try #require(try await store.row(table: "orders", id: "o1"))
        #expect(row == rewritten)
        #expect(row.version == nil)
        let entries = try await store.outboxEntries(table: "orders")
        #expect(entries.map(\.rowID) == ["o1"])
        #expect(entries.first?.baseVersion == 7)
        #expect(try await store.row(table: "orders", id: "o2")?.version == 8)

        let next = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(next.batchID != batch.batchID)
        #expect(
            try sentRequest(next).sections.flatMap(\.changes) == [
                BatchRequest.Change(id: "o1", baseVersion: 7, updatedAt: 1_000_010, deleted: false, values: ["Ada", 3.0, nil])
            ])
    }

    @Test func anAnswerWhoseVersionsAreNotOneRunSettlesEachRowAtItsOwn() async throws {
        // Versions with gaps (another replica's changes between them): each row's version
        // comes from its own result, not from its position in a run.
        for id in ["o1", "o2", "o3"] { _ = try await store.write(put(id, [(0, .text(id))]), table: "orders") }
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let rewritten = try await store.write(patch("o2", [(1, .real(5))]), table: "orders")
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch, [.accepted(id: "o1", version: 4), .accepted(id: "o2", version: 9), .accepted(id: "o3", version: 12)]))
        #expect(try await store.row(table: "orders", id: "o1")?.version == 4)
        #expect(try await store.row(table: "orders", id: "o3")?.version == 12)
        #expect(try await store.row(table: "orders", id: "o2") == rewritten)
        let entries = try await store.outboxEntries(table: "orders")
        #expect(entries.map(\.rowID) == ["o2"] && entries.first?.baseVersion == 9)
    }

    @Test func aLaterChangeOfACleanRowIsBasedOnItsVersion() async throws {
        _ = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.applyAnswer(replicaAnswer(batch, [.accepted(id: "o1", version: 4)]))
        _ = try await store.write(delete("o1"), table: "orders")
        let next = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(try sentRequest(next).sections.flatMap(\.changes).map(\.baseVersion) == [4])
    }

    @Test func aConflictTheServerWonReplacesTheLocalRow() async throws {
        let written = try await store.write(put("o1", [(0, .text("Local")), (1, .real(1))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let server = ordersRow("o1", version: 9, at: 500, ["Server", 2.5, true])
        let report = try await store.applyAnswer(
            replicaAnswer(batch, [.conflict(id: "o1", .init(policy: .lastWriterWins, winner: .server, version: 9, server: server))]))
        #expect(report.conflicts == 1)

        let row = try #require(try await store.row(table: "orders", id: "o1"))
        #expect(row.values == [.text("Server"), .real(2.5), .boolean(true)])
        #expect(row.version == 9)
        #expect(row.updatedAt == 500)
        #expect(row.seq > written.seq)
        #expect(try await store.outboxEntries(table: "orders").isEmpty)
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100)?.batchID == nil)

        // Settled by policy: on record, but not open.
        #expect(try await store.conflicts(table: nil, includeResolved: false, limit: 10).isEmpty)
        let records = try await store.conflicts(table: "orders", includeResolved: true, limit: 10)
        #expect(records.count == 1)
        #expect(records.first?.status == .resolved)
        #expect(records.first?.winner == "server")
        #expect(records.first?.server?.version == 9)
    }

    @Test func aConflictTheServerWonWithATombstoneDeletesTheLocalRow() async throws {
        _ = try await store.write(put("o1", [(0, .text("Local"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch,
                [.conflict(id: "o1", .init(policy: .serverWins, winner: .server, version: 4, server: ordersRow("o1", version: 4, at: 7, [], deleted: true)))]))
        let row = try #require(try await store.row(table: "orders", id: "o1"))
        #expect(row.deleted)
        #expect(row.version == 4)
        #expect(row.values == [.null, .null, .null])
        #expect(store.counts["orders"]?.live == 0)
        #expect(store.counts["orders"]?.tombstones == 1)
        #expect(try await store.outboxEntries(table: "orders").isEmpty)
    }

    @Test func aConflictTheServerWonKeepsALocalRewriteRebased() async throws {
        _ = try await store.write(put("o1", [(0, .text("Local"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let rewritten = try await store.write(put("o1", [(0, .text("Newer"))]), table: "orders")
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch,
                [.conflict(id: "o1", .init(policy: .serverWins, winner: .server, version: 9, server: ordersRow("o1", version: 9, ["S", nil, nil])))]))
        #expect(try await store.row(table: "orders", id: "o1") == rewritten)
        #expect(try await store.outboxEntries(table: "orders").map(\.baseVersion) == [9])
    }

    @Test func aConflictTheClientWonSettlesTheRowAtTheNewVersion() async throws {
        let written = try await store.write(put("o1", [(0, .text("Local"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch,
                [.conflict(id: "o1", .init(policy: .clientWins, winner: .client, version: 10, server: ordersRow("o1", version: 9, ["S", nil, nil])))]))
        let row = try #require(try await store.row(table: "orders", id: "o1"))
        #expect(row.values == written.values)
        #expect(row.version == 10)
        #expect(try await store.outboxEntries(table: "orders").isEmpty)
    }

    @Test func aManualConflictParksTheChangeAndListsItOpen() async throws {
        let written = try await store.write(put("o1", [(0, .text("Local")), (2, .boolean(false))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let server = ordersRow("o1", version: 9, at: 777, ["Server", 2.5, true])
        clock.advance(42)
        _ = try await store.applyAnswer(
            replicaAnswer(batch, [.conflict(id: "o1", .init(policy: .manual, winner: .none, version: 9, server: server))]))

        // The local row stays as written, pending, based on the cloud's version, and parked.
        #expect(try await store.row(table: "orders", id: "o1") == written)
        #expect(try await store.outboxEntries(table: "orders").map(\.baseVersion) == [9])
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100)?.batchID == nil)

        let open = try await store.conflicts(table: nil, includeResolved: false, limit: 10)
        #expect(open.count == 1)
        let record = try #require(open.first)
        #expect(record.table == "orders")
        #expect(record.id == "o1")
        #expect(record.kind == .conflict)
        #expect(record.status == .open)
        #expect(record.detectedAt == 1_000_042)
        #expect(record.policy == "manual")
        #expect(record.winner == "none")
        #expect(record.server?.version == 9)
        #expect(record.server?.updatedAt == 777)
        #expect(record.server?.deleted == false)
        #expect(try record.server.map { try JSONParser.parse($0.valuesJSON) } == ["customer": "Server", "total": 2.5, "paid": true])
        #expect(record.local == written)
        #expect(try await store.openConflictCounts() == ["orders": 1])

        // Other rows still go out around the parked one.
        _ = try await store.write(put("o2", []), table: "orders")
        let other = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(try sentRequest(other).sections.flatMap(\.changes).map(\.id) == ["o2"])
    }

    @Test func takingTheLocalSideSendsItAgainOnTheServerVersion() async throws {
        _ = try await store.write(put("o1", [(0, .text("Local"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch,
                [.conflict(id: "o1", .init(policy: .manual, winner: .none, version: 9, server: ordersRow("o1", version: 9, ["Server", nil, nil])))]))

        let resolved = try await store.resolveConflict(table: "orders", id: "o1", .takeLocal)
        #expect(resolved.values == [.text("Local"), .null, .null])
        #expect(resolved.version == nil)
        #expect(try await store.conflicts(table: nil, includeResolved: false, limit: 10).isEmpty)

        let next = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(next.batchID != batch.batchID)
        #expect(
            try sentRequest(next).sections.flatMap(\.changes) == [
                BatchRequest.Change(id: "o1", baseVersion: 9, updatedAt: 1_000_000, deleted: false, values: ["Local", nil, nil])
            ])

        // Resolving again finds nothing open.
        do {
            _ = try await store.resolveConflict(table: "orders", id: "o1", .takeLocal)
            Issue.record("a resolved conflict was resolved again")
        } catch let error as DallyError {
            #expect(error.code == .notFound)
        }
    }

    @Test func anOpenConflictFollowsTheCloudRowAndTakingLocalIsBasedOnItsLatestVersion() async throws {
        _ = try await store.write(put("o1", [(0, .text("Local"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch,
                [.conflict(id: "o1", .init(policy: .manual, winner: .none, version: 9, server: ordersRow("o1", version: 9, ["Server", nil, nil])))]))
        // While the conflict is open, another gateway changes the row again.
        _ = try await store.applyChanges([ordersPage(since: 9, version: 12, [ordersRow("o1", version: 12, at: 99, ["Server v12", nil, nil])])])
        #expect(try await store.row(table: "orders", id: "o1")?.values.first == .text("Local"))
        let record = try #require(try await store.conflicts(table: "orders", includeResolved: false, limit: 10).first)
        #expect(record.server?.version == 12)
        #expect(record.server?.updatedAt == 99)

        // Taking the local side must replace the cloud's row as the app now sees it (version 12):
        // sent on base 9, the manual policy would only raise the same conflict again.
        _ = try await store.resolveConflict(table: "orders", id: "o1", .takeLocal)
        let next = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let bases = try sentRequest(next).sections.flatMap(\.changes).map(\.baseVersion)
        #expect(bases == [12])
    }

    @Test func takingTheServerSideWritesTheCloudRowAndDropsTheChange() async throws {
        _ = try await store.write(put("o1", [(0, .text("Local"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch,
                [.conflict(id: "o1", .init(policy: .manual, winner: .none, version: 9, server: ordersRow("o1", version: 9, at: 5, ["Server", 1.5, true])))]))
        let resolved = try await store.resolveConflict(table: "orders", id: "o1", .takeServer)
        #expect(resolved.values == [.text("Server"), .real(1.5), .boolean(true)])
        #expect(resolved.version == 9)
        #expect(try await store.outboxEntries(table: "orders").isEmpty)
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100)?.batchID == nil)
    }

    @Test func aRejectedChangeIsParkedAndListed() async throws {
        let written = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        _ = try await store.write(put("o2", [(0, .text("Bea"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        let rejection = BatchAnswer.RowRejection(code: "wrong_type", message: "column 'customer' expects INTEGER", field: "customer")
        let report = try await store.applyAnswer(
            replicaAnswer(batch, [.rejected(id: "o1", rejection), .accepted(id: "o2", version: 1)]))
        #expect(report.rejected == 1)
        #expect(report.accepted == 1)

        #expect(try await store.row(table: "orders", id: "o1") == written)
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["o1"])
        #expect(try await store.nextBatch(gateway: "gw", maxRows: 100)?.batchID == nil)

        let open = try await store.conflicts(table: "orders", includeResolved: false, limit: 10)
        #expect(open.count == 1)
        #expect(open.first?.id == "o1")
        #expect(open.first?.kind == .error)
        #expect(open.first?.status == .open)
        #expect(open.first?.error == rejection)
        #expect(open.first?.server == nil)
        #expect(open.first?.local == written)

        // Taking the server's side of a rejection is refused: the cloud sent no row.
        do {
            _ = try await store.resolveConflict(table: "orders", id: "o1", .takeServer)
            Issue.record("took the server side of a rejection")
        } catch let error as DallyError {
            #expect(error.code == .badRequest)
        }
        // Writing fixed values sends them.
        _ = try await store.resolveConflict(table: "orders", id: "o1", .write(put("o1", [(0, .text("Fixed"))])))
        let next = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(try sentRequest(next).sections.flatMap(\.changes).map(\.values) == [["Fixed", nil, nil]])
    }

    @Test func aRejectedChangeRewrittenInFlightIsNotParked() async throws {
        _ = try await store.write(put("o1", [(0, .text("Ada"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.write(put("o1", [(0, .text("Ada, fixed"))]), table: "orders")
        _ = try await store.applyAnswer(
            replicaAnswer(batch, [.rejected(id: "o1", .init(code: "wrong_type", message: "no", field: "customer"))]))
        let next = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        #expect(try sentRequest(next).sections.flatMap(\.changes).map(\.values) == [["Ada, fixed", nil, nil]])
    }
}

@Suite("Replica sync: downstream changes")
struct ReplicaSyncDownstreamTests {
    let clock = FixedClock(1_000_000)
    let store: ReplicaStore

    init() throws {
        let clock = self.clock
        store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { clock.now })
    }

    @Test func newRowsArriveCleanUnderFreshLocalSequencesAndTheCursorAdvances() async throws {
        _ = try await store.write(put("mine", []), table: "notes")
        let before = store.lastSeq
        let report = try await store.applyChanges([
            ordersPage(
                version: 6,
                [ordersRow("c1", version: 3, at: 50, ["Cloud", 4.5, true]), ordersRow("c2", version: 5, at: 60, [], deleted: true)])
        ])
        #expect(report.received == 2)
        #expect(!report.more)

        let c1 = try #require(try await store.row(table: "orders", id: "c1"))
        #expect(c1.values == [.text("Cloud"), .real(4.5), .boolean(true)])
        #expect(c1.version == 3)
        #expect(c1.updatedAt == 50)
        #expect(!c1.deleted)
        let c2 = try #require(try await store.row(table: "orders", id: "c2"))
        #expect(c2.deleted)
        #expect(c2.version == 5)
        #expect(Set([c1.seq, c2.seq]) == [before + 1, before + 2])
        #expect(store.lastSeq == before + 2)
        #expect(store.counts["orders"]?.live == 1)
        #expect(store.counts["orders"]?.tombstones == 1)

        // Cloud rows are not the replica's to send back.
        #expect(try await store.outboxEntries(table: "orders").isEmpty)
        // Local readers see them like any other change.
        let page = try await store.changes(tables: ["orders"], since: before, limit: 10)
        #expect(Set(page.rows.map(\.row.id)) == ["c1", "c2"])

        #expect(try await store.cloudCursors() == TableVersions([("notes", 0), ("orders", 6)]))
        // The next batch asks for what follows.
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 10))
        #expect(try sentRequest(batch).since == TableVersions([("notes", 0), ("orders", 6)]))
    }

    @Test func theCursorNeverMovesBackAndMoreIsReported() async throws {
        _ = try await store.applyChanges([ordersPage(version: 6, [])])
        let report = try await store.applyChanges([ordersPage(since: 0, version: 2, more: true, [])])
        #expect(report.more)
        #expect(try await store.cloudCursors()["orders"] == 6)
    }

    @Test func aRowAlreadyAtOrPastThePagesVersionIsSkipped() async throws {
        _ = try await store.applyChanges([ordersPage(version: 7, [ordersRow("c1", version: 7, ["Seven", nil, nil])])])
        let seven = try #require(try await store.row(table: "orders", id: "c1"))

        let stale = try await store.applyChanges([
            ordersPage(version: 7, [ordersRow("c1", version: 6, ["Six", nil, nil]), ordersRow("c1", version: 7, ["Seven again", nil, nil])])
        ])
        #expect(stale.received == 0)
        #expect(try await store.row(table: "orders", id: "c1") == seven)

        let newer = try await store.applyChanges([ordersPage(version: 8, [ordersRow("c1", version: 8, ["Eight", nil, nil])])])
        #expect(newer.received == 1)
        let eight = try #require(try await store.row(table: "orders", id: "c1"))
        #expect(eight.values.first == .text("Eight"))
        #expect(eight.version == 8)
        #expect(eight.seq > seven.seq)
    }

    @Test func aRowWithLocalChangesIsNotOverwritten() async throws {
        let local = try await store.write(put("o1", [(0, .text("Local"))]), table: "orders")
        let report = try await store.applyChanges([ordersPage(version: 3, [ordersRow("o1", version: 3, ["Cloud", 1, true])])])
        #expect(report.received == 0)
        #expect(try await store.row(table: "orders", id: "o1") == local)
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["o1"])
        #expect(try await store.cloudCursors()["orders"] == 3)
    }

    @Test func aPageWithOtherColumnsFillsOnlyTheColumnsTheReplicaHas() async throws {
        _ = try await store.applyChanges([ordersPage(version: 1, [ordersRow("o1", version: 1, ["Ada", 2, false])])])
        let narrow = ChangePage(
            table: "orders", columns: ["paid", "colour"], since: 1, version: 2, more: false,
            rows: [ChangePage.ChangedRow(id: "o1", version: 2, updatedAt: 9, deleted: false, values: [true, "red"])])
        _ = try await store.applyChanges([narrow])
        let row = try #require(try await store.row(table: "orders", id: "o1"))
        #expect(row.values == [.text("Ada"), .real(2), .boolean(true)])
        #expect(row.version == 2)
    }

    @Test func aPageForATableTheReplicaDoesNotHaveIsIgnored() async throws {
        let page = ChangePage(
            table: "elsewhere", columns: ["x"], since: 0, version: 4, more: false,
            rows: [ChangePage.ChangedRow(id: "e1", version: 4, updatedAt: 1, deleted: false, values: [1])])
        let report = try await store.applyChanges([page])
        #expect(report.received == 0)
        #expect(try await store.cloudCursors() == TableVersions([("notes", 0), ("orders", 0)]))
    }

    @Test func theAnswersPagesApplyWithItsResults() async throws {
        _ = try await store.write(put("o1", []), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 10))
        let report = try await store.applyAnswer(
            replicaAnswer(
                batch, [.accepted(id: "o1", version: 2)],
                changes: [ordersPage(version: 3, more: true, [ordersRow("c1", version: 1, ["C", nil, nil]), ordersRow("c3", version: 3, ["D", nil, nil])])]))
        #expect(report.accepted == 1)
        #expect(report.received == 2)
        #expect(report.more)
        #expect(try await store.row(table: "orders", id: "c3")?.version == 3)
        #expect(try await store.cloudCursors()["orders"] == 3)
    }
}

@Suite("Replica sync against the cloud store")
struct ReplicaSyncRoundTripTests {
    /// Sends the replica's next batch to the cloud as the HTTP layer would, and applies the answer.
    func exchange(_ replica: ReplicaStore, _ cloud: SQLiteCloudStore, gateway: String) async throws -> SyncReport? {
        guard let batch = try await replica.nextBatch(gateway: gateway, maxRows: 1_000) else { return nil }
        let request = try sentRequest(batch)
        let answer = try await cloud.apply(request, fingerprint: Fingerprint.of(batch.body), pageRows: 1_000, now: 1)
        // Through the wire, as the gateway would read it.
        return try await replica.applyAnswer(BatchAnswer.decode(JSONParser.parse(answer.encode()), outline: request.outline))
    }

    @Test func twoGatewaysConvergeThroughTheCloud() async throws {
        let cloud = try openCloud(tables: [orders, notes])
        let a = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { 1_000 })
        let b = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { 2_000 })
        #expect(a.replicaID != b.replicaID)

        _ = try await a.write(put("o1", [(0, .text("from A")), (1, .real(1.5))]), table: "orders")
        _ = try await a.write(put("n1", [(0, .text("note A"))]), table: "notes")
        let sentByA = try #require(try await exchange(a, cloud, gateway: "gw-a"))
        #expect(sentByA.accepted == 2)
        #expect(sentByA.received == 0)
        #expect(try await a.row(table: "orders", id: "o1")?.version == 1)

        // B writes its own row; its answer brings A's rows down, and not its own.
        _ = try await b.write(put("o2", [(0, .text("from B"))]), table: "orders")
        let sentByB = try #require(try await exchange(b, cloud, gateway: "gw-b"))
        #expect(sentByB.accepted == 1)
        #expect(sentByB.received == 2)
        let o1 = try #require(try await b.row(table: "orders", id: "o1"))
        #expect(o1.values == [.text("from A"), .real(1.5), .null])
        #expect(o1.version == 1)
        #expect(try await b.row(table: "notes", id: "n1")?.version == 1)
        #expect(try await b.cloudCursors() == TableVersions([("notes", 1), ("orders", 2)]))

        // B changes A's row; A fetches the change downstream.
        _ = try await b.write(patch("o1", [(2, .boolean(true))]), table: "orders")
        _ = try #require(try await exchange(b, cloud, gateway: "gw-b"))
        #expect(try await b.row(table: "orders", id: "o1")?.version == 3)
        var pages: [ChangePage] = []
        for (table, since) in try await a.cloudCursors().entries {
            pages.append(try await cloud.changes(table: table, since: since, limit: 100, excludingReplica: BatchRequest.origin(gateway: "gw-a", replica: a.replicaID)))
        }
        let fetched = try await a.applyChanges(pages)
        #expect(fetched.received == 2)
        let mine = try #require(try await a.row(table: "orders", id: "o1"))
        #expect(mine.values == [.text("from A"), .real(1.5), .boolean(true)])
        #expect(mine.version == 3)
        #expect(try await a.row(table: "orders", id: "o2")?.version == 2)
        #expect(try await a.cloudCursors() == TableVersions([("notes", 1), ("orders", 3)]))
        #expect(try await a.nextBatch(gateway: "gw-a", maxRows: 100)?.batchID == nil)
        #expect(try await b.nextBatch(gateway: "gw-b", maxRows: 100)?.batchID == nil)
    }

    @Test func aLostAnswerIsRecoveredByResendingTheSameBatch() async throws {
        let cloud = try openCloud(tables: [orders, notes])
        let replica = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { 1_000 })
        _ = try await replica.write(put("o1", [(0, .text("x"))]), table: "orders")
        let batch = try #require(try await replica.nextBatch(gateway: "gw", maxRows: 10))
        // The cloud applies it, but the answer never arrives.
        _ = try await cloud.apply(try sentRequest(batch), fingerprint: Fingerprint.of(batch.body), pageRows: 10, now: 1)

        let report = try #require(try await exchange(replica, cloud, gateway: "gw"))
        #expect(report.replayed)
        #expect(report.accepted == 1)
        #expect(cloud.versions["orders"] == 1)
        #expect(try await replica.row(table: "orders", id: "o1")?.version == 1)
    }
}
