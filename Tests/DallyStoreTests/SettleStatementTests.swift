import DallyCore
import DallySync
import GRDB
import Testing

@testable import DallyStore

/// Settling an answer runs no statement that changes the schema: GRDB empties a connection's
/// prepared statements after any such statement, and the writer would prepare every statement
/// again after each piece of every answer, the local writes' among them.
@Suite("Replica sync: settling keeps the writer's prepared statements")
struct SettleStatementTests {
    @Test func settlingAnAnswerKeepsTheWritersPreparedStatements() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], synchronousFull: false)
        defer { try? store.close() }
        _ = try await store.writeBatch(
            [put("o1", [(0, .text("a"))]), put("o2", [(0, .text("b"))])], table: "orders", allOrNothing: true)
        let batch = try #require(try await store.nextBatch(gateway: "g", maxRows: 10))
        #expect(batch.rows == 2)
        let table = try #require(store.tables["orders"])
        let (settled, kept) = try await store.pool.write { db -> (Int, Bool) in
            let before = try db.cachedStatement(sql: Outbox.upsert)
            let flight = try #require(try AnswerApplier.flight(batch.batchID, db: db))
            let section = try #require(flight.sections["orders"])
            let settled = try AcceptedRows.settle([("o1", 1), ("o2", 2)], table: table, seq: section.seq, batch: flight, db: db)
            return (settled, try db.cachedStatement(sql: Outbox.upsert) === before)
        }
        #expect(settled == 2)
        #expect(kept)
        let pending = try await store.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_outbox") }
        #expect(pending == 0)
    }

    /// Entries leave the outbox by a settle's sets or one at a time (``Outbox/remove``), and
    /// either way the totals, the ages and what is counted in flight follow: the outbox has no
    /// delete trigger to do it.
    @Test func theTotalsAndAgesFollowEveryWayAnEntryLeaves() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], synchronousFull: false)
        defer { try? store.close() }
        _ = try await store.writeBatch(
            (1...3).map { put("o\($0)", [(0, .text("x"))]) }, table: "orders", allOrNothing: true)
        let batch = try #require(try await store.nextBatch(gateway: "g", maxRows: 2))
        _ = try await store.applyAnswer(
            replicaAnswer(batch, try sentRequest(batch).sections[0].changes.map { .accepted(id: $0.id, version: 1) }))
        let state = { @Sendable (db: Database) throws -> [Int] in
            [
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_outbox") ?? -1,
                try Int.fetchOne(db, sql: "SELECT entries FROM dally_outbox_totals WHERE tbl = 'orders'") ?? -1,
                try Int.fetchOne(db, sql: "SELECT bytes FROM dally_outbox_totals WHERE tbl = 'orders'") ?? -1,
                try Int.fetchOne(db, sql: "SELECT TOTAL(entries) FROM dally_outbox_ages WHERE tbl = 'orders'") ?? -1,
                Int(try FlightTally.counted(table: "orders", agesThrough: .max, db: db).entries),
            ]
        }
        let left = try await store.pool.read(state)
        #expect(left[0] == 1 && left[1] == 1 && left[2] > 0 && left[3] == 1 && left[4] == 0, "\(left)")
        // The last entry, in a batch in flight, leaves alone: it is no longer counted in flight.
        let second = try #require(try await store.nextBatch(gateway: "g", maxRows: 2))
        #expect(second.rows == 1)
        #expect(try await store.pool.read(state)[4] == 1)
        try await store.pool.write { db in try Outbox.remove(table: "orders", rowID: "o3", db: db) }
        #expect(try await store.pool.read(state) == [0, 0, 0, 0, 0])
        // Removing an entry that is gone changes nothing.
        try await store.pool.write { db in try Outbox.remove(table: "orders", rowID: "o3", db: db) }
        #expect(try await store.pool.read(state) == [0, 0, 0, 0, 0])
    }

    /// A settle asks the table once whether any row was written since the batch was built, and
    /// reads each row's sequence number only when one was. Both ways settle alike: a row written
    /// again stays pending on the new version, a row gone from the table keeps its entry, and
    /// every other row takes its version and leaves the outbox, its totals and its ages.
    @Test func aPieceSettlesAlikeWhetherOrNotARowWasWrittenSince() async throws {
        for written in ["none", "a row of the piece", "another row", "a row gone"] {
            let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], synchronousFull: false)
            defer { try? store.close() }
            _ = try await store.writeBatch(
                (1...4).map { put("o\($0)", [(0, .text("x"))]) }, table: "orders", allOrNothing: true)
            let batch = try #require(try await store.nextBatch(gateway: "g", maxRows: 4))
            #expect(batch.rows == 4)
            switch written {
            case "a row of the piece":
                _ = try await store.writeBatch([put("o2", [(0, .text("y"))])], table: "orders", allOrNothing: true)
            case "another row":
                _ = try await store.writeBatch([put("o9", [(0, .text("y"))])], table: "orders", allOrNothing: true)
            case "a row gone":
                try await store.pool.write { db in try db.execute(sql: "DELETE FROM t_orders WHERE id = 'o2'") }
            default: break
            }
            let accepted: [(id: String, version: Int64)] = [("o1", 11), ("o2", 12), ("o3", 13), ("o4", 14)]
            let settled = try await settlePiece(accepted, of: batch.batchID, in: store)
            #expect(settled == 4, "\(written)")
            let state = try await store.pool.read { db in
                (
                    versions: try Row.fetchAll(db, sql: "SELECT id, version FROM t_orders WHERE id < 'o9' ORDER BY id")
                        .map { "\($0["id"] as String)=\(($0["version"] as Int64?) ?? -1)" },
                    pending: try Row.fetchAll(db, sql: "SELECT row_id, base_version FROM dally_outbox ORDER BY row_id")
                        .map { "\($0["row_id"] as String)@\(($0["base_version"] as Int64?) ?? -1)" },
                    totals: try Int.fetchOne(db, sql: "SELECT entries FROM dally_outbox_totals WHERE tbl = 'orders'") ?? -1,
                    ages: try Int.fetchOne(db, sql: "SELECT TOTAL(entries) FROM dally_outbox_ages WHERE tbl = 'orders'") ?? -1,
                    emptyAges: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_outbox_ages WHERE entries <= 0") ?? -1,
                    inFlight: try flying(db).count
                )
            }
            switch written {
            case "a row of the piece":
                #expect(state.versions == ["o1=11", "o2=-1", "o3=13", "o4=14"])
                #expect(state.pending == ["o2@12"])
            case "another row":
                #expect(state.versions == ["o1=11", "o2=12", "o3=13", "o4=14"])
                #expect(state.pending == ["o9@-1"])
            case "a row gone":
                #expect(state.versions == ["o1=11", "o3=13", "o4=14"])
                #expect(state.pending == ["o2@12"])
            default:
                #expect(state.versions == ["o1=11", "o2=12", "o3=13", "o4=14"])
                #expect(state.pending == [])
            }
            #expect(state.totals == state.pending.count && state.ages == state.pending.count, "\(written): \(state)")
            #expect(state.inFlight == 0)
            #expect(state.emptyAges == 0, "an age left with no entry: \(written)")
            // The same piece again (an answer applied once more after an interruption) finds
            // it settled and changes nothing.
            let again = try await settlePiece(accepted, of: batch.batchID, in: store)
            #expect(again == 0)
            let totalsAfter = try await store.pool.read { db in
                try Int.fetchOne(db, sql: "SELECT entries FROM dally_outbox_totals WHERE tbl = 'orders'") ?? -1
            }
            #expect(totalsAfter == state.totals)
        }
    }

    /// A piece's leaving entries are taken off their ages one keyed statement per first-dirty
    /// time while it holds few times, and in a set-based statement when it holds many (rows
    /// written one commit apiece): either way the ages and totals are the outbox's own.
    @Test func theAgesFollowASettleOfFewOrManyFirstDirtyTimes() async throws {
        for commits in [3, AcceptedRows.fewAges + 8] {
            let clock = FixedClock(1_000_000)
            let store = try ReplicaStore.open(
                directory: temporaryDirectory(), tables: [orders], synchronousFull: false, now: { clock.now })
            defer { try? store.close() }
            for i in 0..<commits {
                // Two rows a commit, and one more a little later: the batch below empties the
                // first time and leaves the second.
                _ = try await store.writeBatch(
                    [put("a\(i)", [(0, .text("x"))]), put("b\(i)", [(0, .text(String(repeating: "y", count: i)))])],
                    table: "orders", allOrNothing: true)
                clock.advance(3)
                _ = try await store.writeBatch([put("c\(i)", [(0, .text("z"))])], table: "orders", allOrNothing: true)
                clock.advance(4)
            }
            // The batch takes the a and b rows (the lowest ids); one of them is written again
            // while it flies, and stays pending.
            let batch = try #require(try await store.nextBatch(gateway: "g", maxRows: 2 * commits))
            _ = try await store.writeBatch([put("a1", [(0, .text("again"))])], table: "orders", allOrNothing: true)
            let sent = try sentRequest(batch).sections[0].changes
            _ = try await store.applyAnswer(
                replicaAnswer(batch, sent.enumerated().map { .accepted(id: $1.id, version: Int64($0 + 1)) }))
            let (ages, outboxAges, totals, outboxTotals) = try await store.pool.read { db in
                (
                    try Row.fetchAll(db, sql: "SELECT at, entries FROM dally_outbox_ages WHERE tbl = 'orders' ORDER BY at")
                        .map { "\($0[0] as Int64):\($0[1] as Int64)" },
                    try Row.fetchAll(
                        db,
                        sql: "SELECT first_dirty_at, COUNT(*) FROM dally_outbox WHERE tbl = 'orders' GROUP BY 1 ORDER BY 1"
                    ).map { "\($0[0] as Int64):\($0[1] as Int64)" },
                    try Row.fetchOne(db, sql: "SELECT entries, bytes FROM dally_outbox_totals WHERE tbl = 'orders'")
                        .map { "\($0[0] as Int64)/\($0[1] as Int64)" },
                    try Row.fetchOne(db, sql: "SELECT COUNT(*), SUM(bytes) FROM dally_outbox WHERE tbl = 'orders'")
                        .map { "\($0[0] as Int64)/\($0[1] as Int64)" }
                )
            }
            #expect(sent.count == 2 * commits)
            #expect(ages == outboxAges, "\(commits) commits")
            #expect(totals == outboxTotals, "\(commits) commits")
            #expect(outboxAges.count == commits + 1, "every c row's time, and a1's")
        }
    }

    /// A settle deletes its piece's records and entries by walking the stretch of ids from the
    /// piece's lowest to its highest: what else lies in the stretch stays, whether another
    /// batch's records, rows written since, or a parked entry (then the entries are searched
    /// for one by one), and a piece whose ids do not rise (a wrapped section) settles alike.
    @Test func whatLiesBetweenAPiecesIdsStays() async throws {
        for between in ["another batch", "written since", "parked", "wrapped"] {
            let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], synchronousFull: false)
            defer { try? store.close() }
            _ = try await store.writeBatch(
                ["r1", "r3", "r5"].map { put($0, [(0, .text("x"))]) }, table: "orders", allOrNothing: true)
            let first = try #require(try await store.nextBatch(gateway: "g", maxRows: 10))
            #expect(first.rows == 3)
            _ = try await store.writeBatch(
                ["r2", "r4"].map { put($0, [(0, .text("y"))]) }, table: "orders", allOrNothing: true)
            var second: OutgoingBatch?
            switch between {
            case "another batch":
                second = try #require(try await store.nextBatch(gateway: "g", maxRows: 10, excluding: [first.batchID]))
                #expect(second?.rows == 2)
            case "parked":
                try await store.pool.write { db in
                    try db.execute(sql: "UPDATE dally_outbox SET parked = 'error' WHERE row_id = 'r4'")
                }
            default: break
            }
            let accepted: [(id: String, version: Int64)] =
                between == "wrapped" ? [("r3", 12), ("r5", 13), ("r1", 11)] : [("r1", 11), ("r3", 12), ("r5", 13)]
            let settled = try await settlePiece(accepted, of: first.batchID, in: store)
            #expect(settled == 3, "\(between)")
            let state = try await store.pool.read { db in
                (
                    pending: try String.fetchAll(db, sql: "SELECT row_id FROM dally_outbox ORDER BY row_id"),
                    inFlight: try flying(db).map(\.id).sorted(),
                    totals: try Int.fetchOne(db, sql: "SELECT entries FROM dally_outbox_totals WHERE tbl = 'orders'") ?? -1,
                    versions: try Row.fetchAll(db, sql: "SELECT id, version FROM t_orders ORDER BY id")
                        .map { "\($0["id"] as String)=\(($0["version"] as Int64?) ?? -1)" }
                )
            }
            #expect(state.pending == ["r2", "r4"], "\(between)")
            #expect(state.inFlight == (second == nil ? [] : ["r2", "r4"]), "\(between)")
            #expect(state.totals == 2, "\(between)")
            #expect(state.versions == ["r1=11", "r2=-1", "r3=12", "r4=-1", "r5=13"], "\(between)")
        }
    }

    /// A row applied by an earlier attempt at an answer, written again since and sent in
    /// another batch, belongs to that batch: the first answer applied again leaves its flight,
    /// its entry and its version alone.
    @Test func aRowSentAgainInAnotherBatchIsLeftToThatBatch() async throws {
        let store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders], synchronousFull: false)
        defer { try? store.close() }
        _ = try await store.writeBatch([put("a", [(0, .text("x"))])], table: "orders", allOrNothing: true)
        let first = try #require(try await store.nextBatch(gateway: "g", maxRows: 10))
        // The first attempt applies the piece, and stops before the flight ends.
        #expect(try await settlePiece([("a", 1)], of: first.batchID, in: store) == 1)
        _ = try await store.writeBatch([put("a", [(0, .text("y"))])], table: "orders", allOrNothing: true)
        let second = try #require(try await store.nextBatch(gateway: "g", maxRows: 10, excluding: [first.batchID]))
        #expect(second.rows == 1)

        #expect(try await settlePiece([("a", 1)], of: first.batchID, in: store) == 0)
        let state = try await store.pool.read { db in
            (
                record: try flying(db).first { $0.id == "a" }?.batch,
                pending: try Int64.fetchOne(db, sql: "SELECT base_version FROM dally_outbox WHERE row_id = 'a'"),
                tally: try FlightTally.read(table: "orders", db: db)?.entries
            )
        }
        #expect(state.record == second.batchID)
        #expect(state.pending == 1)
        #expect(state.tally == 1)
    }

    /// Applies `accepted` (rows of `orders`) as one piece of the answer to `batchID`, as
    /// ``ReplicaStore/applyAnswer(_:)`` does, without ending the flight; how many it applied.
    private func settlePiece(
        _ accepted: [(id: String, version: Int64)], of batchID: String, in store: ReplicaStore
    ) async throws -> Int {
        let tables = store.tables
        let rows = accepted.map { BatchAnswer.RowResult.accepted(id: $0.id, version: $0.version) }
        return try await store.pool.write { db in
            let flight = try #require(try AnswerApplier.flight(batchID, db: db))
            let answer = BatchAnswer(
                batchID: batchID, replayed: false, results: [.init(table: "orders", rows: rows)], changes: [])
            var context = CommitContext(lastSeq: 0, now: 0)
            let piece = try AnswerApplier.pending(answer, of: flight)
            return try AnswerApplier.apply(piece[...], batch: flight, tables: tables, db: db, context: &context).accepted
        }
    }

    /// The rows in flight, with their batches.
    private func flying(_ db: Database) throws -> [(id: String, batch: String)] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT j.value, s.batch
                FROM dally_inflight_sections s JOIN dally_inflight_ids i USING (batch, tbl), json_each(i.ids) j
                WHERE s.settled IS NULL OR j.value > s.settled
                """
        ).map { ($0[0], $0[1]) }
    }
}
