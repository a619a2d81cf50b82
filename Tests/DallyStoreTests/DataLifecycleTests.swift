import DallyCore
import DallySync
import Foundation
import Synchronization
import Testing

@testable import DallyStore

private let day: Int64 = 86_400_000

private func bounded(_ lifecycle: TableLifecycle) -> TableSchema {
    TableSchema(name: orders.name, columns: orders.columns, conflict: orders.conflict, policy: orders.policy, lifecycle: lifecycle)
}

@Suite("Data lifecycle: compaction, retention, bounded outbox, resync")
struct DataLifecycleTests {
    let clock = FixedClock(100 * day)
    let directory = temporaryDirectory()

    func open(_ schema: TableSchema = orders) throws -> ReplicaStore {
        let clock = self.clock
        return try ReplicaStore.open(directory: directory, tables: [schema], now: { clock.now })
    }

    @Test func tombstonesOlderThanTheTTLArePurgedAndTheHorizonTellsStaleReadersToResync() async throws {
        let store = try open(bounded(TableLifecycle(tombstoneTTL: .seconds(86_400))))
        // Clean rows from the cloud, then two deleted by the cloud: clean tombstones.
        _ = try await store.applyChanges([
            ordersPage(version: 3, [
                ordersRow("a", version: 1, at: clock.now, ["Ada", 1, true]),
                ordersRow("b", version: 2, at: clock.now, ["Bea", 2, true]),
                ordersRow("c", version: 3, at: clock.now, ["Cy", 3, true]),
            ])
        ])
        let reader = store.lastSeq
        _ = try await store.applyChanges([
            ordersPage(since: 3, version: 5, [
                ordersRow("a", version: 4, at: clock.now, [], deleted: true),
                ordersRow("b", version: 5, at: clock.now, [], deleted: true),
            ])
        ])
        // A pending local delete is a dirty tombstone: it must survive compaction.
        _ = try await store.write(delete("c"), table: "orders")
        #expect(store.counts["orders"]?.tombstones == 3)

        #expect(try await store.compact(now: clock.now).isEmpty)
        clock.advance(2 * day)
        let report = try await store.compact(now: clock.now)
        #expect(report.tombstonesPurged == ["orders": 2])
        #expect(store.counts["orders"]?.tombstones == 1)
        #expect(try await store.row(table: "orders", id: "a") == nil)
        #expect(try await store.row(table: "orders", id: "c")?.deleted == true)

        let horizon = try #require(try await store.lifecycle()["orders"]?.horizon)
        #expect(horizon > reader)
        #expect(throws: DallyError.self) { try store.requireCursor(reader, tables: ["orders"]) }
        do {
            try store.requireCursor(reader, tables: ["orders"])
        } catch {
            #expect(error.code == .resyncRequired)
            #expect(error.horizon == horizon)
        }
        try store.requireCursor(0, tables: ["orders"])
        try store.requireCursor(horizon, tables: ["orders"])
        // The horizon survives a restart.
        try store.close()
        let reopened = try open(bounded(TableLifecycle(tombstoneTTL: .seconds(86_400))))
        #expect(throws: DallyError.self) { try reopened.requireCursor(reader, tables: ["orders"]) }
        #expect(try await reopened.lifecycle()["orders"]?.tombstonesPurged == 2)
    }

    @Test func retentionRemovesOnlySyncedRowsWithoutTombstones() async throws {
        let store = try open(bounded(TableLifecycle(retain: .seconds(7 * 86_400))))
        _ = try await store.applyChanges([
            ordersPage(version: 2, [
                ordersRow("old", version: 1, at: clock.now, ["Ada", 1, true]),
                ordersRow("dirty", version: 2, at: clock.now, ["Bea", 2, true]),
            ])
        ])
        _ = try await store.write(put("dirty", [(0, .text("Bea")), (1, .real(3))], updatedAt: clock.now), table: "orders")
        _ = try await store.write(put("new", [(0, .text("Cy"))], updatedAt: clock.now), table: "orders")
        clock.advance(8 * day)
        let report = try await store.compact(now: clock.now)
        #expect(report.retainedRemoved == ["orders": 1])
        #expect(try await store.row(table: "orders", id: "old") == nil)
        #expect(try await store.row(table: "orders", id: "dirty")?.values[1] == .real(3))
        #expect(try await store.row(table: "orders", id: "new") != nil)
        #expect(store.counts["orders"]?.tombstones == 0)
        // Nothing went into the outbox for the removed row.
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID).sorted() == ["dirty", "new"])
    }

    @Test func aFullOutboxRejectsNewRowsButTakesUpdatesOfPendingOnes() async throws {
        let store = try open(bounded(TableLifecycle(maxPendingRows: 2, onFull: .reject)))
        _ = try await store.write(put("a", [(0, .text("1"))]), table: "orders")
        _ = try await store.write(put("b", [(0, .text("2"))]), table: "orders")
        await #expect(throws: DallyError.self) {
            _ = try await store.write(put("c", [(0, .text("3"))]), table: "orders")
        }
        do {
            _ = try await store.write(put("c", [(0, .text("3"))]), table: "orders")
        } catch let error as DallyError {
            #expect(error.code == .insufficientStorage)
        }
        #expect(try await store.row(table: "orders", id: "c") == nil)
        _ = try await store.write(put("a", [(0, .text("1b"))]), table: "orders")
        let outcome = try await store.writeBatch(
            [put("b", [(0, .text("2b"))]), put("d", [(0, .text("4"))])], table: "orders", allOrNothing: false)
        #expect(outcome.saved == ["b"])
        #expect(outcome.errors.map(\.error.code) == [.insufficientStorage])
        #expect(try await store.outboxSummary().first?.pending == 2)
    }

    @Test func dropOldestMakesRoomAndCountsWhatItDropped() async throws {
        let store = try open(bounded(TableLifecycle(maxPendingRows: 3, onFull: .dropOldest)))
        for i in 0..<5 {
            _ = try await store.write(put("r\(i)", [(0, .text("\(i)"))]), table: "orders")
            clock.advance(1)
        }
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["r2", "r3", "r4"])
        #expect(try await store.row(table: "orders", id: "r0") == nil)
        #expect(store.counts["orders"]?.live == 3)
        #expect(try await store.lifecycle()["orders"]?.droppedOnFull == 2)
        let summary = try #require(try await store.outboxSummary().first)
        #expect(summary.pending == 3)
        #expect(summary.oldestFirstDirtyAt == clock.now - 3)
    }

    /// `drop_oldest` chooses among the entries not in flight: a batch in flight over the same
    /// ids keeps its rows and its exact tally while the oldest waiting ones are dropped.
    @Test func dropOldestLeavesTheRowsInFlightAndTheirTally() async throws {
        let store = try open(bounded(TableLifecycle(maxPendingRows: 4, onFull: .dropOldest)))
        for id in ["a", "c", "e"] { _ = try await store.write(put(id, [(0, .text(id))]), table: "orders") }
        clock.advance(1)
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        for id in ["b", "d", "f"] {
            _ = try await store.write(put(id, [(0, .text(id))]), table: "orders")
            clock.advance(1)
        }
        // Four entries at most: "b" and "d" dropped for "d" and "f", never a row in flight.
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["a", "c", "e", "f"])
        #expect(try await store.pool.read { db in try FlightTally.read(table: "orders", db: db)?.entries } == 3)
        let summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight) == (1, 3))
        _ = try await store.applyAnswer(
            replicaAnswer(batch, [.accepted(id: "a", version: 1), .accepted(id: "c", version: 2), .accepted(id: "e", version: 3)]))
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["f"])
    }

    /// `drop_oldest` chooses among entries not in flight, and a batch's rows are not in flight
    /// until its record: a row dropped between the plan that read it and that record (deleted,
    /// the cloud never had it) must not leave in the batch, or the cloud would hold a row the
    /// replica no longer has.
    @Test func aRowDroppedBetweenItsBatchsPlanAndRecordIsLeftOut() async throws {
        let store = try open(bounded(TableLifecycle(maxPendingRows: 3, onFull: .dropOldest)))
        for id in ["a", "b", "c"] {
            _ = try await store.write(put(id, [(0, .text(id))]), table: "orders")
            clock.advance(1)
        }
        let batch = try #require(
            try await store.nextBatch(gateway: "gw", maxRows: 100, scope: .everything, excluding: []) {
                // The outbox is full: "d" takes the place of the oldest, "a", which the plan read.
                _ = try await store.write(put("d", [(0, .text("d"))]), table: "orders")
            })
        #expect(batch.outline.sections.map(\.ids) == [["b", "c"]])
        #expect(batch.rows == 2)
        let sent = try BatchRequest.decode(JSONParser.parse(batch.body), maxRows: .max)
        #expect(sent.sections.flatMap { $0.changes.map(\.id) } == ["b", "c"])
        #expect(try await store.row(table: "orders", id: "a") == nil)
        let summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight) == (1, 2))
        _ = try await store.applyAnswer(replicaAnswer(batch, [.accepted(id: "b", version: 1), .accepted(id: "c", version: 2)]))
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["d"])
        #expect(try await store.row(table: "orders", id: "c")?.version == 2)
    }

    /// A batch whose every row was dropped before its record is not sent: the plan reads again.
    @Test func aBatchWhoseRowsWereAllDroppedIsReadAgain() async throws {
        let store = try open(bounded(TableLifecycle(maxPendingRows: 1, onFull: .dropOldest)))
        _ = try await store.write(put("a", [(0, .text("a"))]), table: "orders")
        clock.advance(1)
        let writes = Counter()
        let batch = try #require(
            try await store.nextBatch(gateway: "gw", maxRows: 100, scope: .everything, excluding: []) {
                guard writes.next() == 0 else { return }
                _ = try await store.write(put("b", [(0, .text("b"))]), table: "orders")
            })
        #expect(batch.outline.sections.map(\.ids) == [["b"]])
        #expect(try await store.row(table: "orders", id: "a") == nil)
    }

    @Test func theSummaryFollowsTheOutboxThroughFlightAndAnswer() async throws {
        let store = try open()
        _ = try await store.write(put("a", [(0, .text("Ada"))]), table: "orders")
        _ = try await store.write(put("b", [(0, .text("Bea"))]), table: "orders")
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 1))
        clock.advance(10)
        _ = try await store.write(put("c", [(0, .text("Cy"))]), table: "orders")
        var summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight) == (2, 1))
        _ = try await store.applyAnswer(replicaAnswer(batch, [.accepted(id: "a", version: 1)]))
        summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight) == (2, 0))
        #expect(summary.oldestFirstDirtyAt == clock.now - 10)
    }

    @Test func aResyncPageRemovesCleanRowsTheCloudNoLongerHasAndKeepsDirtyOnes() async throws {
        let store = try open()
        _ = try await store.applyChanges([
            ordersPage(version: 3, [
                ordersRow("kept", version: 1, ["Ada", 1, true]),
                ordersRow("gone", version: 2, ["Bea", 2, true]),
                ordersRow("dirty", version: 3, ["Cy", 3, true]),
            ])
        ])
        _ = try await store.write(put("dirty", [(0, .text("Cy2"))]), table: "orders")
        let seqBefore = store.lastSeq

        // The cloud answers a stale cursor with a page from 0 marked resync, in two pages.
        var first = ordersPage(since: 0, version: 1, more: true, [ordersRow("kept", version: 1, ["Ada", 1, true])])
        first.resync = true
        _ = try await store.applyChanges([first])
        #expect(try await store.resyncingTables() == ["orders"])
        #expect(try await store.cloudCursors() == TableVersions([("orders", 1)]))
        let request = try sentRequest(try #require(try await store.nextBatch(gateway: "gw", maxRows: 10)))
        #expect(request.resyncing == ["orders"])

        _ = try await store.applyChanges([ordersPage(since: 1, version: 9, [ordersRow("fresh", version: 9, ["Di", 4, true])])])
        #expect(try await store.resyncingTables().isEmpty)
        #expect(try await store.row(table: "orders", id: "gone")?.deleted == true)
        #expect(try await store.row(table: "orders", id: "gone")?.seq ?? 0 > seqBefore)
        #expect(try await store.row(table: "orders", id: "kept")?.deleted == false)
        #expect(try await store.row(table: "orders", id: "dirty")?.values[0] == .text("Cy2"))
        #expect(try await store.row(table: "orders", id: "fresh") != nil)
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID) == ["dirty"])
        let ledger = try #require(try await store.lifecycle()["orders"])
        #expect((ledger.resyncs, ledger.cloudRemoved) == (1, 1))
    }

    /// A resync page read before a row was committed, applied after a page that brought the row
    /// (two answers for the table crossed on the way): the resync ends by removing the row, which
    /// its page did not bring, but the next pull, from the resync page's version, brings it back.
    @Test func aRowThatCameAfterTheResyncPageWasReadComesBackWithTheNextPull() async throws {
        let store = try open()
        _ = try await store.applyChanges([
            ordersPage(version: 3, [
                ordersRow("a", version: 1, ["Ada", 1, true]),
                ordersRow("b", version: 2, ["Bea", 2, true]),
                ordersRow("c", version: 3, ["Cy", 3, true]),
            ])
        ])
        var resync = ordersPage(since: 0, version: 2, [
            ordersRow("a", version: 1, ["Ada", 1, true]), ordersRow("b", version: 2, ["Bea", 2, true]),
        ])
        resync.resync = true
        _ = try await store.applyChanges([resync])
        #expect(try await store.resyncingTables().isEmpty)
        #expect(try await store.cloudCursors() == TableVersions([("orders", 2)]))
        #expect(try await store.row(table: "orders", id: "c")?.deleted == true)

        _ = try await store.applyChanges([ordersPage(since: 2, version: 3, [ordersRow("c", version: 3, ["Cy", 3, true])])])
        #expect(try await store.row(table: "orders", id: "c")?.deleted == false)
        #expect(try await store.row(table: "orders", id: "c")?.version == 3)
        #expect(try await store.outboxEntries(table: "orders").isEmpty)
    }
}

@Test func aNewReplicaReturnsFreedPagesToTheFilesystem() throws {
    let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders])
    defer { try? store.close() }
    #expect(try store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") } == 2)
}

@Test func aFullDiskRefusesTheWriteAsInsufficientStorageAndLosesNothingAcknowledged() async throws {
    let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders])
    defer { try? store.close() }
    for i in 0..<20 { _ = try await store.write(put("r\(i)", [(0, .text("row \(i)"))]), table: "orders") }
    // SQLite's own page limit stands in for a full filesystem: the writer gets SQLITE_FULL.
    try await store.pool.writeWithoutTransaction { db in
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        try db.execute(sql: "PRAGMA max_page_count = \(pages + 2)")
    }
    var acknowledged: [String] = []
    var refusal: DallyError?
    let big = String(repeating: "x", count: 3_000)
    for i in 0..<200 {
        do {
            _ = try await store.write(put("big\(i)", [(0, .text(big))]), table: "orders")
            acknowledged.append("big\(i)")
        } catch let error as DallyError {
            refusal = error
            break
        }
    }
    #expect(refusal?.code == .insufficientStorage)
    for id in acknowledged + (0..<20).map({ "r\($0)" }) {
        #expect(try await store.row(table: "orders", id: id) != nil, "row \(id) was acknowledged")
    }
    #expect(try await store.row(table: "orders", id: "big\(acknowledged.count)") == nil)
    try await store.pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
    _ = try await store.write(put("after", [(0, .text("room again"))]), table: "orders")
    #expect(try await store.row(table: "orders", id: "after") != nil)
}

@Test func belowTheFreeSpaceFloorLocalWritesAreRefusedAndSyncAndReadsGoOn() async throws {
    let directory = temporaryDirectory()
    let free = try #require(FreeSpaceFloor.freeBytes(of: directory))
    let store = try ReplicaStore.open(directory: directory, tables: [orders], minFreeBytes: free * 2)
    defer { try? store.close() }
    await #expect(throws: DallyError.self) { _ = try await store.write(put("a", [(0, .text("Ada"))]), table: "orders") }
    do {
        _ = try await store.write(put("a", [(0, .text("Ada"))]), table: "orders")
    } catch let error as DallyError {
        #expect(error.code == .insufficientStorage)
    }
    #expect(try await store.row(table: "orders", id: "a") == nil)
    // Pages from the cloud still apply: sync is what drains the outbox.
    _ = try await store.applyChanges([ordersPage(version: 1, [ordersRow("c1", version: 1, ["Cy", 1, true])])])
    #expect(try await store.row(table: "orders", id: "c1") != nil)
}

@Test func atTheReplicasSizeBoundLocalWritesAreRefusedAndSyncAndReadsGoOn() async throws {
    let directory = temporaryDirectory()
    // A bound the freshly opened replica already passes.
    let store = try ReplicaStore.open(directory: directory, tables: [orders], maxBytes: 1)
    defer { try? store.close() }
    #expect(store.maxBytes == 1)
    do {
        _ = try await store.write(put("a", [(0, .text("Ada"))]), table: "orders")
        Issue.record("a write past store.max_bytes was saved")
    } catch let error as DallyError {
        #expect(error.code == .insufficientStorage)
        #expect(error.message.contains("store.max_bytes"))
    }
    #expect(try await store.row(table: "orders", id: "a") == nil)
    // Pages from the cloud still apply: sync is what drains the outbox.
    _ = try await store.applyChanges([ordersPage(version: 1, [ordersRow("c1", version: 1, ["Cy", 1, true])])])
    #expect(try await store.row(table: "orders", id: "c1") != nil)
}

@Test func theSizeBoundFollowsTheFilesAsTheyGrowAndShrink() throws {
    let directory = temporaryDirectory()
    let path = directory + "/replica.sqlite"
    #expect(FileManager.default.createFile(atPath: path, contents: Data(count: 1_000)))
    let ceiling = ReplicaCeiling(path: path, maxBytes: 3_000, interval: .zero)
    try ceiling.check()
    // The WAL counts: both files are disk the replica takes.
    #expect(FileManager.default.createFile(atPath: path + "-wal", contents: Data(count: 2_500)))
    #expect(throws: DallyError.self) { try ceiling.check() }
    try FileManager.default.removeItem(atPath: path + "-wal")
    try ceiling.check()
    // No bound: never refuses.
    try ReplicaCeiling(path: path, maxBytes: 0, interval: .zero).check()
}

/// Counts calls across a test's closures.
private final class Counter: Sendable {
    private let count = Mutex(0)

    func next() -> Int { count.withLock { value in defer { value += 1 }; return value } }
}
