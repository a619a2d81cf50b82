import DallyFrugal
import Testing

@Suite("StalenessTracker")
struct StalenessTrackerTests {
    let tables = [
        TraceTable(name: "fast", columns: ["v INTEGER"], maxDelay: 100, networks: ["cellular"]),
        TraceTable(name: "slow", columns: ["v INTEGER"], maxDelay: 1_000, networks: ["wifi"]),
    ]

    @Test func anArrivalDeliversEveryEarlierWriteOfItsRow() {
        var tracker = StalenessTracker(tables: tables, tolerance: 20)
        tracker.recordWrite(table: "fast", id: "a", at: 0)
        tracker.recordWrite(table: "fast", id: "b", at: 10)
        tracker.recordWrite(table: "fast", id: "a", at: 50)
        // The state written at 50 arrives at 120: the write at 0, superseded, is delivered too.
        tracker.recordArrival(table: "fast", id: "a", updatedAt: 50, arrivedAt: 120)
        tracker.recordArrival(table: "fast", id: "b", updatedAt: 10, arrivedAt: 300)
        let fast = tracker.report(at: 400).perTable["fast"]
        #expect(fast?.delivered == 3)
        #expect(fast?.undelivered == 0)
        // Staleness 70, 120, 290: nearest rank.
        #expect(fast?.p50 == 120)
        #expect(fast?.p99 == 290)
        #expect(fast?.max == 290)
        // Deadline 100 + 20 of tolerance: 120 is on time, 290 is not.
        #expect(fast?.deadlineMisses == 1)
    }

    @Test func anOlderStateDeliversOnlyTheWritesItCarries() {
        var tracker = StalenessTracker(tables: tables)
        tracker.recordWrite(table: "fast", id: "a", at: 200)
        tracker.recordWrite(table: "fast", id: "a", at: 210)
        tracker.recordArrival(table: "fast", id: "a", updatedAt: 200, arrivedAt: 230)
        // An echo of the same state, and rows never written here, change nothing.
        tracker.recordArrival(table: "fast", id: "a", updatedAt: 200, arrivedAt: 260)
        tracker.recordArrival(table: "fast", id: "zzz", updatedAt: 999, arrivedAt: 260)
        tracker.recordArrival(table: "other", id: "a", updatedAt: 999, arrivedAt: 260)
        let early = tracker.report(at: 300).perTable["fast"]
        #expect(early?.delivered == 1)
        #expect(early?.undelivered == 1)
        #expect(early?.max == 30)
        // Still pending at 300: 90 ms old, not yet late; at 311, 101 ms old, late.
        #expect(early?.deadlineMisses == 0)
        #expect(tracker.report(at: 311).perTable["fast"]?.deadlineMisses == 1)
    }

    @Test func overallPoolsTablesEachAgainstItsOwnDeadline() {
        var tracker = StalenessTracker(tables: tables)
        tracker.recordWrite(table: "fast", id: "a", at: 0)
        tracker.recordWrite(table: "slow", id: "p", at: 0)
        tracker.recordWrite(table: "slow", id: "q", at: 0)
        tracker.recordArrival(table: "fast", id: "a", updatedAt: 0, arrivedAt: 500)
        tracker.recordArrival(table: "slow", id: "p", updatedAt: 0, arrivedAt: 500)
        let report = tracker.report(at: 2_000)
        #expect(report.perTable["fast"]?.deadlineMisses == 1)
        #expect(report.perTable["slow"]?.deadlineMisses == 1)  // q, undelivered past 1000
        #expect(report.overall.delivered == 2)
        #expect(report.overall.undelivered == 1)
        #expect(report.overall.deadlineMisses == 2)
        #expect(report.overall.p50 == 500)
    }

    @Test func nothingRecordedIsAllZeros() {
        let report = StalenessTracker(tables: tables).report(at: 0)
        #expect(report.overall == StalenessStats())
        #expect(report.perTable["slow"] == StalenessStats())
    }
}
