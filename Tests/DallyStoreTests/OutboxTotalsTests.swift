import DallyCore
import DallySync
import GRDB
import Testing

@testable import DallyStore

/// The outbox's running totals and ages (what `/stats`, the scheduler and a table's bound read)
/// follow its entries through every way an entry leaves: an accepted change, a conflict either
/// side won, a change written again in flight, the server's side taken, a rejection.
@Suite("Outbox totals")
struct OutboxTotalsTests {
    let clock = FixedClock(1_000_000)
    let store: ReplicaStore

    init() throws {
        let clock = self.clock
        store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: { clock.now })
    }

    /// Per table, the totals as kept and as counted from the entries; and per table and
    /// first-dirty time, the ages as kept and as counted.
    private func totals() async throws -> (kept: [String], counted: [String]) {
        try await store.pool.read { db in
            let kept = try Row.fetchAll(
                db, sql: "SELECT tbl, entries, bytes FROM dally_outbox_totals WHERE entries <> 0 OR bytes <> 0 ORDER BY tbl")
            let counted = try Row.fetchAll(
                db, sql: "SELECT tbl, COUNT(*), SUM(bytes) FROM dally_outbox GROUP BY tbl ORDER BY tbl")
            let text = { (row: Row) in "\(row[0] as String) \(row[1] as Int64) \(row[2] as Int64)" }
            let ages = try Row.fetchAll(db, sql: "SELECT tbl, at, entries FROM dally_outbox_ages ORDER BY tbl, at")
            let countedAges = try Row.fetchAll(
                db, sql: """
                    SELECT tbl, first_dirty_at, COUNT(*) FROM dally_outbox GROUP BY tbl, first_dirty_at
                    ORDER BY tbl, first_dirty_at
                    """)
            // Each table's tallies in flight add up to the outbox entries of the rows its
            // sections carry, unless one is stale (an entry changed: the summary counts them then).
            let tables = try Set(Row.fetchAll(db, sql: "SELECT DISTINCT tbl FROM dally_inflight_tallies").map { $0[0] as String })
                .union(Row.fetchAll(db, sql: "SELECT DISTINCT tbl FROM dally_inflight_sections").map { $0[0] as String })
                .sorted()
            let talliesKept = try tables.map { "tally \($0) " + (try FlightTally.read(table: $0, db: db).map(describe) ?? "stale") }
            let talliesCounted = try tables.map { table in
                let stale = try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM dally_inflight_tallies WHERE tbl = ? AND ages IS NULL)",
                    arguments: [table]) ?? false
                var tally = FlightTally()
                for row in try Row.fetchAll(
                    db, sql: """
                        SELECT o.first_dirty_at, o.bytes
                        FROM dally_inflight_sections s JOIN dally_inflight_ids i USING (batch, tbl), json_each(i.ids) j
                        JOIN dally_outbox o ON o.tbl = s.tbl AND o.row_id = j.value
                        WHERE s.tbl = ? AND (s.settled IS NULL OR j.value > s.settled)
                        """, arguments: [table])
                {
                    tally.add(at: row[0], bytes: row[1])
                }
                return "tally \(table) " + (stale ? "stale" : describe(tally))
            }
            return (
                kept.map(text) + ages.map(text) + talliesKept,
                counted.map(text) + countedAges.map(text) + talliesCounted
            )
        }
    }

    private func describe(_ tally: FlightTally) -> String {
        "\(tally.entries) \(tally.bytes) " + tally.byAge.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }

    /// Whether a summary counts `table`'s records in flight instead of adding up their tallies.
    private func talliesStale(_ table: String) async throws -> Bool {
        try await store.pool.read { db in try FlightTally.read(table: table, db: db) == nil }
    }

    @Test func everyWayOutOfTheOutboxIsCounted() async throws {
        for id in ["a", "b", "c", "d", "e", "f"] {
            _ = try await store.write(put(id, [(0, .text("Local \(id)")), (1, .real(1))]), table: "orders")
            clock.advance(id < "d" ? 0 : 7)
        }
        _ = try await store.write(put("n", [(0, .text("note"))]), table: "notes")
        var now = try await totals()
        #expect(now.kept == now.counted)
        #expect(now.kept.prefix(2).map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == ["notes 1", "orders 6"])

        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        clock.advance(5)
        now = try await totals()
        #expect(now.kept == now.counted)
        #expect(try await talliesStale("orders") == false)
        #expect(now.kept.contains { $0.hasPrefix("tally orders 6 ") })
        // Written again in flight: its entry stays, dirty from when the batch was built, and the
        // summary's bytes follow its new size.
        _ = try await store.write(put("e", [(0, .text("Written again"))]), table: "orders")
        now = try await totals()
        #expect(now.kept == now.counted)
        // An entry in flight changed: its batch's tally is stale, and the summary counts the
        // entries of the rows in flight.
        #expect(try await talliesStale("orders"))
        #expect(try await talliesStale("notes") == false)
        let flying = try #require(try await store.outboxSummary().first { $0.table == "orders" })
        #expect((flying.pending, flying.inFlight, flying.bytes) == (0, 6, 0))
        let server = { (id: String) in ordersRow(id, version: 9, at: 500, ["Server", 2.5, true]) }
        _ = try await store.applyAnswer(
            BatchAnswer(
                batchID: batch.batchID, replayed: false,
                results: [
                    BatchAnswer.SectionResult(
                        table: "orders",
                        rows: [
                            .accepted(id: "a", version: 1),
                            .conflict(id: "b", .init(policy: .lastWriterWins, winner: .server, version: 9, server: server("b"))),
                            .conflict(id: "c", .init(policy: .clientWins, winner: .client, version: 10, server: server("c"))),
                            .conflict(id: "d", .init(policy: .manual, winner: .none, version: 9, server: server("d"))),
                            .accepted(id: "e", version: 11),
                            .rejected(id: "f", .init(code: "wrong_type", message: "column 'total' expects REAL", field: "total")),
                        ]),
                    BatchAnswer.SectionResult(table: "notes", rows: [.accepted(id: "n", version: 1)]),
                ],
                changes: []))
        now = try await totals()
        #expect(now.kept == now.counted)
        // Left: the manual conflict, the row written again, the rejected change.
        #expect(try await store.outboxEntries(table: "orders").map(\.rowID).sorted() == ["d", "e", "f"])
        #expect(now.kept.first?.hasPrefix("orders 3 ") == true)

        // The server's side taken for the open conflict removes its entry too.
        _ = try await store.resolveConflict(table: "orders", id: "d", .takeServer)
        now = try await totals()
        #expect(now.kept == now.counted)
        #expect(now.kept.first?.hasPrefix("orders 2 ") == true)
    }

    /// A batch's tally stays exact while rows are written around it: a new row within the ids
    /// it carries, and a row written after it was read, leave it as it is; only a row it
    /// carries, written again, makes the summary count the entries in flight.
    @Test func onlyARowInFlightWrittenAgainMakesItsBatchCountAgain() async throws {
        for id in ["a", "c", "e"] { _ = try await store.write(put(id, [(0, .text(id))]), table: "orders") }
        _ = try #require(try await store.nextBatch(gateway: "gw", maxRows: 100))
        _ = try await store.write(put("b", [(0, .text("new, between two rows in flight"))]), table: "orders")
        _ = try await store.write(put("b", [(0, .text("written again, not in flight"))]), table: "orders")
        var now = try await totals()
        #expect(now.kept == now.counted)
        #expect(try await talliesStale("orders") == false)
        var summary = try #require(try await store.outboxSummary().first { $0.table == "orders" })
        #expect((summary.pending, summary.inFlight) == (1, 3))

        _ = try await store.write(put("c", [(0, .text("written again in flight, longer than before"))]), table: "orders")
        now = try await totals()
        #expect(now.kept == now.counted)
        #expect(try await talliesStale("orders"))
        summary = try #require(try await store.outboxSummary().first { $0.table == "orders" })
        #expect((summary.pending, summary.inFlight) == (1, 3))
        let counted = try await store.pool.read { db in try FlightTally.counted(table: "orders", agesThrough: .max, db: db) }
        let bytes = try await store.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT SUM(bytes) FROM dally_outbox WHERE row_id IN ('a', 'c', 'e')")
        }
        #expect(counted.entries == 3 && counted.bytes == bytes)
    }

    /// The oldest waiting entry is found from the ages with the entries that do not wait (in
    /// flight, parked) taken out, whichever time they share with entries that wait.
    @Test func theOldestWaitingTimeLeavesOutEntriesInFlightAndParked() async throws {
        let start = clock.now
        for (id, after) in [("a", 0), ("b", 0), ("c", 0), ("d", 5), ("e", 10)] {
            clock.advance(Int64(after) - (clock.now - start))
            _ = try await store.write(put(id, [(0, .text(id))]), table: "orders")
        }
        var summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.oldestFirstDirtyAt) == (5, start))

        // a and b fly: c still waits from the same time.
        let batch = try #require(try await store.nextBatch(gateway: "gw", maxRows: 2))
        summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight, summary.oldestFirstDirtyAt) == (3, 2, start))

        // b is parked by a manual conflict, then c flies: d is the oldest that waits.
        let server = ordersRow("b", version: 9, at: 500, ["Server", 2.5, true])
        _ = try await store.applyAnswer(
            replicaAnswer(
                batch,
                [
                    .accepted(id: "a", version: 1),
                    .conflict(id: "b", .init(policy: .manual, winner: .none, version: 9, server: server)),
                ]))
        let second = try #require(try await store.nextBatch(gateway: "gw", maxRows: 1))
        // Two batches' tallies, one of them answered one row at a time: still what the records hold.
        let now = try await totals()
        #expect(now.kept == now.counted)
        #expect(try await talliesStale("orders") == false)
        summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight, summary.parked) == (2, 1, 1))
        #expect(summary.oldestFirstDirtyAt == start + 5)

        // c accepted and d and e under way: nothing waits, so there is no oldest.
        _ = try await store.applyAnswer(replicaAnswer(second, [.accepted(id: "c", version: 2)]))
        _ = try await store.nextBatch(gateway: "gw", maxRows: 10)
        summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight, summary.parked, summary.oldestFirstDirtyAt) == (0, 2, 1, nil))
    }

    /// When every one of the oldest times a summary reads first is under way, it counts them
    /// all and still finds the oldest entry that waits.
    @Test func theOldestWaitingTimeIsFoundBehindMoreTimesInFlightThanASummaryReadsFirst() async throws {
        let start = clock.now
        let count = Outbox.agesRead + 6
        for i in 0..<count {
            _ = try await store.write(put(String(format: "r%03d", i), [(0, .text("\(i)"))]), table: "orders")
            clock.advance(1)
        }
        // Ids in the order they were written: the batch takes the oldest.
        _ = try #require(try await store.nextBatch(gateway: "gw", maxRows: Outbox.agesRead + 2))
        let summary = try #require(try await store.outboxSummary().first)
        #expect((summary.pending, summary.inFlight) == (4, Int64(Outbox.agesRead + 2)))
        #expect(summary.oldestFirstDirtyAt == start + Int64(Outbox.agesRead + 2))
    }
}
