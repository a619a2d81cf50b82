import DallyCore
import DallySync
import Foundation
import GRDB
import Synchronization
import Testing

@testable import DallyStore

/// Sync work is cut into transactions of a bounded number of rows, so that local writes never
/// wait long behind it, and an apply interrupted between pieces (a crash, a kill) loses
/// nothing and applies nothing twice.
@Suite("Replica sync: bounded pieces")
struct SyncPieceTests {
    static let rows = 10_000
    static let pieceRows = 500
    let clock = FixedClock(1_000_000)
    let directory = temporaryDirectory()
    let store: ReplicaStore

    init() throws {
        let clock = self.clock
        store = try ReplicaStore.open(
            directory: directory, tables: [orders, notes], synchronousFull: false, syncPieceRows: Self.pieceRows, idleAnswerPieces: 1,
            now: { clock.now })
    }

    private func writeRows() async throws {
        let writes = (0..<Self.rows).map { put("o\($0)", [(0, .text("c\($0)")), (1, .real(Double($0)))]) }
        _ = try await store.writeBatch(writes, table: "orders", allOrNothing: true)
    }

    /// Row i is accepted at version i + 1, but every 97th is a conflict the cloud won, and
    /// every 101st is rejected.
    private static func result(_ index: Int) -> BatchAnswer.RowResult {
        let id = "o\(index)"
        let version = Int64(index + 1)
        if index % 97 == 0 {
            return .conflict(
                id: id,
                .init(
                    policy: .serverWins, winner: .server, version: version,
                    server: ordersRow(id, version: version, ["server", 0, true])))
        }
        if index % 101 == 0 {
            return .rejected(id: id, .init(code: "wrong_type", message: "no", field: "total"))
        }
        return .accepted(id: id, version: version)
    }

    private static func answer(_ batch: OutgoingBatch, replayed: Bool = false) throws -> BatchAnswer {
        let request = try sentRequest(batch)
        let ids = request.sections.flatMap(\.changes).map(\.id)
        let index = Dictionary(uniqueKeysWithValues: (0..<rows).map { ("o\($0)", $0) })
        return replicaAnswer(batch, ids.compactMap { index[$0] }.map(result), replayed: replayed)
    }

    private static var conflicts: Int { (0..<rows).filter { $0 % 97 == 0 }.count }
    private static var rejections: Int { (0..<rows).filter { $0 % 97 != 0 && $0 % 101 == 0 }.count }

    @Test func anAnswerOfTenThousandRowsIsAppliedInBoundedPieces() async throws {
        try await writeRows()
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: Self.rows))
        #expect(batch.rows == Self.rows)
        let pieces = Counter()
        store.afterSyncPiece.withLock { $0 = { pieces.add() } }
        let holdsBefore = store.writerTimings.syncHolds.count

        let report = try await store.applyAnswer(try Self.answer(batch))

        #expect(pieces.value == Self.rows / Self.pieceRows)
        // The pieces, the last of which ends the flight.
        #expect(store.writerTimings.syncHolds.count - holdsBefore == Int64(Self.rows / Self.pieceRows))
        #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_inflight") } == 0)
        #expect(report.sent == Self.rows)
        #expect(report.conflicts == Self.conflicts)
        #expect(report.rejected == Self.rejections)
        #expect(report.accepted == Self.rows - Self.conflicts - Self.rejections)
        try await expectEveryRowSettledOnce()
    }

    /// While no local write waits, an answer's pieces join one transaction, up to
    /// `idleAnswerPieces` of them: 20 pieces of 500 rows in three transactions of 8, 8 and 4.
    @Test func whileNoLocalWriteWaitsAnAnswersPiecesShareATransaction() async throws {
        try await writeRows()
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: Self.rows))
        try store.close()
        let clock = self.clock
        let idle = try ReplicaStore.open(
            directory: directory, tables: [orders, notes], synchronousFull: false, syncPieceRows: Self.pieceRows,
            idleAnswerPieces: 8, now: { clock.now })
        let transactions = Counter()
        idle.afterSyncPiece.withLock { $0 = { transactions.add() } }
        let holdsBefore = idle.writerTimings.syncHolds.count

        let report = try await idle.applyAnswer(try Self.answer(batch))

        #expect(transactions.value == 3)
        #expect(idle.writerTimings.syncHolds.count - holdsBefore == 3)
        #expect(report.sent == Self.rows)
        #expect(report.accepted == Self.rows - Self.conflicts - Self.rejections)
        try await expectEveryRowSettledOnce(in: idle)
        try idle.close()
    }

    /// Makes the store's sync work (an answer's, a page's) throw once its `afterPiece`-th piece
    /// has committed, as a process stopped there would.
    private func stopSyncWork(afterPiece stop: Int) {
        let pieces = Counter()
        store.afterSyncPiece.withLock {
            $0 = {
                pieces.add()
                if pieces.value == stop { throw StoreError("stopped after piece \(stop)") }
            }
        }
    }

    @Test func anApplyStoppedBetweenPiecesLosesNothingAndAppliesNothingTwice() async throws {
        try await writeRows()
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: Self.rows))
        stopSyncWork(afterPiece: 7)
        await #expect(throws: StoreError.self) { try await store.applyAnswer(try Self.answer(batch)) }
        try store.close()

        // Seven pieces are applied; the batch is still in flight and goes again unchanged.
        let reopened = try ReplicaStore.open(
            directory: directory, tables: [orders, notes], synchronousFull: false, syncPieceRows: Self.pieceRows, idleAnswerPieces: 1,
            now: { 2_000_000 })
        let applied = 7 * Self.pieceRows
        let parked = try Self.answer(batch).results[0].rows.prefix(applied).filter {
            if case .rejected = $0 { true } else { false }
        }
        #expect(try await reopened.outboxEntries(table: "orders").count == Self.rows - applied + parked.count)
        // The batch's tally lost the applied pieces' records with them.
        let flying = try #require(try await reopened.outboxSummary().first { $0.table == "orders" })
        #expect(flying.inFlight == Int64(Self.rows - applied))
        let tallied = try await reopened.pool.read { db in try FlightTally.read(table: "orders", db: db)?.entries }
        #expect(tallied == Int64(Self.rows - applied))
        let resent = try #require(try await reopened.nextBatch(gateway: "gw", maxRows: Self.rows))
        #expect(resent.resent)
        #expect(resent.batchID == batch.batchID)
        #expect(resent.body == batch.body)

        // The cloud answers the retry from its record: only the rest is applied.
        let report = try await reopened.applyAnswer(try Self.answer(batch, replayed: true))
        #expect(report.sent == Self.rows - applied)
        try await expectEveryRowSettledOnce(in: reopened)
        try reopened.close()
    }

    /// The flight ends in the last piece's transaction: stopped right after it, nothing is in
    /// flight and nothing goes again.
    @Test func anApplyStoppedAfterItsLastPieceLeavesNothingInFlight() async throws {
        try await writeRows()
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: Self.rows))
        stopSyncWork(afterPiece: Self.rows / Self.pieceRows)
        await #expect(throws: StoreError.self) { try await store.applyAnswer(try Self.answer(batch)) }
        #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_inflight") } == 0)
        #expect(try await store.nextBatch(gateway: "gw", maxRows: Self.rows)?.resent != true)
        try await expectEveryRowSettledOnce()
    }

    @Test func aLargePageMovesItsRowsAndCursorTogetherPieceByPiece() async throws {
        let rows = (0..<Self.rows).map { ordersRow("c\($0)", version: Int64($0 + 1), ["cloud", .double(Double($0)), false]) }
        let page = ordersPage(version: Int64(Self.rows), rows)
        stopSyncWork(afterPiece: 3)
        let seqBefore = store.lastSeq
        await #expect(throws: StoreError.self) { try await store.applyChanges([page], pulled: ["orders"]) }
        let cursor = try #require(try await store.cloudCursors().entries.first { $0.table == "orders" }?.version)
        #expect(cursor == Int64(3 * Self.pieceRows))
        #expect(store.counts["orders"]?.live == Int64(3 * Self.pieceRows))

        // Pulled again from the cursor, the rest arrives, each row once.
        store.afterSyncPiece.withLock { $0 = nil }
        let rest = ordersPage(since: cursor, version: Int64(Self.rows), Array(rows[Int(cursor)...]))
        let report = try await store.applyChanges([rest], pulled: ["orders"])
        #expect(report.received == Self.rows - Int(cursor))
        #expect(store.counts["orders"]?.live == Int64(Self.rows))
        #expect(store.lastSeq - seqBefore == Int64(Self.rows))
    }

    @Test func localWritesGoBeforeQueuedSyncWork() async throws {
        let order = Recorder()
        let gate = DispatchSemaphore(value: 0)
        let commit = store.groupCommit
        // A sync operation holds the writer while the others queue behind it.
        async let blocker: Void = commit.perform(lane: .sync(.objects)) { _, _ in
            order.append("sync-0")
            gate.wait()
        }
        while order.items.isEmpty { await Task.yield() }
        async let syncs: Void = withThrowingTaskGroup(of: Void.self) { group in
            for i in 1...3 { group.addTask { try await commit.perform(lane: .sync(.objects)) { _, _ in order.append("sync-\(i)") } } }
            try await group.waitForAll()
        }
        while commit.queued.sync < 3 { await Task.yield() }
        async let locals: Void = withThrowingTaskGroup(of: Void.self) { group in
            for _ in 1...3 { group.addTask { try await commit.perform { _, _ in order.append("local") } } }
            try await group.waitForAll()
        }
        while commit.queued.local < 3 { await Task.yield() }
        gate.signal()
        _ = try await (blocker, syncs, locals)

        // The local writes waited for one sync operation only, then went together; the sync
        // operations followed one by one, in order.
        #expect(order.items == ["sync-0", "local", "local", "local", "sync-1", "sync-2", "sync-3"])
        #expect(store.writerTimings.localWaits.count >= 3)
    }

    @Test func redoableSyncStepsSkipTheirOwnFsyncAndLocalWritesKeepTheirs() async throws {
        let durable = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], synchronousFull: true)
        let commit = durable.groupCommit
        let mode: @Sendable (Database, inout CommitContext) throws -> Int = { db, _ in
            try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
        }
        // SQLite: 1 = NORMAL (no fsync at commit in WAL mode), 2 = FULL.
        #expect(try await commit.perform(lane: .sync(.applyAnswer), mode) == 1)
        #expect(try await commit.perform(lane: .sync(.applyPage), mode) == 1)
        #expect(try await commit.perform(lane: .sync(.recordBatch), mode) == 2)
        #expect(try await commit.perform(mode) == 2)
        #expect(try await store.groupCommit.perform(lane: .sync(.applyAnswer), mode) == 1)  // normal throughout
        try durable.close()
    }

    private func expectEveryRowSettledOnce(in store: ReplicaStore? = nil) async throws {
        let store = store ?? self.store
        let conflicts = try await store.conflicts(table: "orders", includeResolved: true, limit: 100_000)
        #expect(conflicts.count == Self.conflicts + Self.rejections)
        let pending = try await store.outboxEntries(table: "orders")
        // Rejected changes stay parked; everything else is clean at its version.
        #expect(pending.count == Self.rejections)
        for index in stride(from: 0, to: Self.rows, by: 37) {
            let row = try #require(try await store.row(table: "orders", id: "o\(index)"))
            switch Self.result(index) {
            case .accepted(_, let version): #expect(row.version == version)
            case .conflict(_, let conflict): #expect(row.version == conflict.version)
            case .rejected: #expect(row.version == nil)
            }
        }
        #expect(try await store.nextBatch(gateway: "gw", maxRows: Self.rows)?.batchID == nil)
    }
}

/// Counts calls from any thread.
private final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Records labels in the order they come, from any thread.
private final class Recorder: Sendable {
    private let list = Mutex<[String]>([])
    func append(_ item: String) { list.withLock { $0.append(item) } }
    var items: [String] { list.withLock { $0 } }
}
