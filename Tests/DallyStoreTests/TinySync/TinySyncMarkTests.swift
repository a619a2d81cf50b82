import DallyClocks
import DallyCore
import Testing

@testable import DallyStore

/// TinySync's cursor: a time handed out per answer that maps back to the tie-free sequence.
@Suite("TinySync marks")
struct TinySyncMarkTests {
    let clock = ManualClock(epochMillis: 1_800_000_000_000)
    let store: ReplicaStore

    init() throws {
        store = try ReplicaStore.open(directory: temporaryDirectory(), tables: [orders, notes], now: clock.wallMillis)
    }

    // MARK: - The pure rules

    @Test func aNewMarkTakesTheClockOrOneMillisecondPastTheLatest() {
        #expect(TinySyncMarkRule.nextTime(now: 5_000, latest: nil) == 5_000)
        #expect(TinySyncMarkRule.nextTime(now: 5_000, latest: 4_999) == 5_000)
        #expect(TinySyncMarkRule.nextTime(now: 5_000, latest: 5_000) == 5_001)
        // A clock set back still yields increasing marks.
        #expect(TinySyncMarkRule.nextTime(now: 1_000, latest: 5_003) == 5_004)
    }

    @Test func aTimeResumesAtTheGreatestMarkAtOrBeforeIt() {
        let marks = [TinySyncMark(at: 1_000, seq: 7), TinySyncMark(at: 2_000, seq: 9), TinySyncMark(at: 2_001, seq: 12)]
        #expect(TinySyncMarkRule.resumeSeq(for: 2_000, marks: marks) == 9)  // exact
        #expect(TinySyncMarkRule.resumeSeq(for: 2_001, marks: marks) == 12)  // exact, same second
        #expect(TinySyncMarkRule.resumeSeq(for: 1_999, marks: marks) == 7)  // between: earlier, repeats
        #expect(TinySyncMarkRule.resumeSeq(for: 999, marks: marks) == nil)  // before every mark: everything
        #expect(TinySyncMarkRule.resumeSeq(for: 9_999, marks: marks) == 12)
    }

    @Test func pruningKeepsOneOldMarkPerHourWithinTheHorizon() {
        let hour = TinySyncMarkRule.sparseSpacingMillis
        let now: Int64 = 100 * 86_400_000
        let edge = now - TinySyncMarkRule.horizonMillis
        let base = edge + 10 * hour  // on an hour boundary: the day is a whole number of hours
        let old = [
            TinySyncMark(at: edge - 1, seq: 1),  // past the horizon
            TinySyncMark(at: base, seq: 2), TinySyncMark(at: base + 5, seq: 3),  // one hour: the earliest stays
            TinySyncMark(at: base + hour, seq: 4),
        ]
        #expect(TinySyncMarkRule.prunable(old.reversed(), now: now) == [edge - 1, base + 5])
    }

    // MARK: - Against a replica, with a manual clock

    @Test func answersInOneMillisecondGetDistinctMarksThatResumeExactly() async throws {
        _ = try await store.write(put("a", [(0, .text("x"))]), table: "orders")
        let first = try await store.recordTinySyncMark(seq: store.lastSeq)
        _ = try await store.write(put("b", [(0, .text("y"))]), table: "orders")
        let second = try await store.recordTinySyncMark(seq: store.lastSeq)
        // The clock has not moved: the second answer's time is bumped by one millisecond.
        #expect(first.at == 1_800_000_000_000)
        #expect(second.at == first.at + 1)
        #expect(try await store.tinySyncResumeSeq(for: first.at) == 1)
        #expect(try await store.tinySyncResumeSeq(for: second.at) == 2)
        // The seconds-only form of either (a client that drops milliseconds) resumes no later.
        #expect(try await store.tinySyncResumeSeq(for: first.at / 1000 * 1000) == 1)
        #expect(try await store.tinySyncResumeSeq(for: first.at - 1) == nil)

        clock.advance(by: .seconds(3))
        let third = try await store.recordTinySyncMark(seq: store.lastSeq)
        #expect(third.at == 1_800_000_003_000)
        #expect(try await store.tinySyncMarks().map(\.at) == [first.at, second.at, third.at])
    }

    @Test func marksSurviveAReopen() async throws {
        let directory = temporaryDirectory()
        let first = try ReplicaStore.open(directory: directory, tables: [orders], now: clock.wallMillis)
        _ = try await first.write(put("a", []), table: "orders")
        let mark = try await first.recordTinySyncMark(seq: first.lastSeq)
        try first.close()
        let again = try ReplicaStore.open(directory: directory, tables: [orders], now: clock.wallMillis)
        #expect(try await again.tinySyncResumeSeq(for: mark.at) == 1)
        // Even with the clock where it was, the next mark is later than every mark before.
        #expect(try await again.recordTinySyncMark(seq: again.lastSeq).at == mark.at + 1)
        try again.close()
    }

    @Test func marksStayBounded() async throws {
        let store = try ReplicaStore.open(
            directory: temporaryDirectory(), tables: [orders], synchronousFull: false, now: clock.wallMillis)
        for _ in 0..<(TinySyncMarkRule.denseMarks + 50) {
            _ = try await store.recordTinySyncMark(seq: 0)
        }
        // All within one hour of each other: beyond the dense ones, one is kept.
        #expect(try await store.tinySyncMarks().count == TinySyncMarkRule.denseMarks + 1)
        try store.close()
    }

    // MARK: - Writes and reads

    @Test func updatedCreatesAMissingRowAndDeletedOfAnUnknownRowIsSaved() async throws {
        let outcomes = try await store.saveTinySync([
            (table: "orders", writes: [patch("new", [(0, .text("Ada"))]), delete("never")]),
            (table: "notes", writes: []),
        ])
        #expect(outcomes[0].saved.map { $0.id } == ["new", "never"])
        #expect(outcomes[0].saved.map { $0.seq } == [1, 0])
        #expect(try await store.row(table: "orders", id: "new")?.values.first == .text("Ada"))

        _ = try await store.saveTinySync([(table: "orders", writes: [delete("new")])])
        let refused = try await store.saveTinySync([(table: "orders", writes: [patch("new", [(1, .real(2))])])])
        #expect(refused[0].errors.map { $0.error.code } == [.notFound])
        let outbox = try await store.outboxEntries(table: "orders")
        #expect(outbox.map(\.rowID) == ["new"])
    }

    @Test func rowsAreReadInASequenceWindowWithScopeAndEveryTombstone() async throws {
        _ = try await store.writeBatch(
            [put("a", [(0, .text("u1"))]), put("b", [(0, .text("u2"))]), put("c", [(0, .text("u1"))])], table: "orders",
            allOrNothing: false)
        _ = try await store.write(delete("b"), table: "orders")  // seq 4
        _ = try await store.write(put("d", [(0, .text("u1"))]), table: "orders")  // seq 5
        let scope: [(column: String, value: Value)] = [("customer", .text("u1"))]
        let window = try await store.tinySyncRows(
            table: "orders", after: 1, through: 4, filters: scope, includeDeleted: true, limit: 10)
        #expect(window.map(\.id) == ["c", "b"])
        let live = try await store.tinySyncRows(
            table: "orders", after: 0, through: 5, filters: scope, includeDeleted: false, limit: 2)
        #expect(live.map(\.id) == ["a", "c"])
    }
}
