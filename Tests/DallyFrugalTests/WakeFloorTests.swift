import DallyCore
import DallyFrugal
import Testing

@Suite("WakeFloor")
struct WakeFloorTests {
    typealias Interval = WakeFloor.Interval

    @Test func greedyStabsAtEarliestDeadlines() {
        let intervals = [
            Interval(release: 12, deadline: 20), Interval(release: 0, deadline: 10), Interval(release: 5, deadline: 15),
        ]
        #expect(WakeFloor.stabs(intervals) == [10, 20])
        #expect(WakeFloor.minimumWakeUps(intervals, windows: []) == 2)
        #expect(WakeFloor.stabs([]) == [])
    }

    @Test func aStabInsideAWindowCanServeBothKinds() {
        // Stabbing the anytime interval at its deadline (10) would miss the window [5, 7);
        // one stab at 6 serves both.
        let intervals = [Interval(release: 0, deadline: 10), Interval(release: 5, deadline: 20, needsWindow: true)]
        #expect(WakeFloor.minimumWakeUps(intervals, windows: [5..<7]) == 1)
        // Without the window-only interval the deadline is right.
        let anytime = [Interval(release: 0, deadline: 10), Interval(release: 8, deadline: 12)]
        #expect(WakeFloor.minimumWakeUps(anytime, windows: [0..<6]) == 1)
    }

    @Test func aWindowOnlyIntervalInAnOutageIsDueWhenTheWindowOpens() {
        let late = Interval(release: 10, deadline: 20, needsWindow: true)
        #expect(WakeFloor.minimumWakeUps([late], windows: [0..<5, 30..<40]) == 1)
        // Due at 30, so one stab at 30 also serves an anytime interval ending there…
        #expect(WakeFloor.minimumWakeUps([late, Interval(release: 25, deadline: 30)], windows: [0..<5, 30..<40]) == 1)
        // …but not one ending before.
        #expect(WakeFloor.minimumWakeUps([late, Interval(release: 25, deadline: 29)], windows: [0..<5, 30..<40]) == 2)
        // With no window ever after, it cannot be sent, and is not counted.
        #expect(WakeFloor.minimumWakeUps([late], windows: [0..<5]) == 0)
    }

    @Test func theSeedOneFloors() {
        let partial = FrugalTrace.generate(seed: 1, wifi: .partial)
        let always = FrugalTrace.generate(seed: 1, wifi: .always)
        let allUp = WakeFloor.minimumWakeUps(trace: always, allClassesUp: true)
        #expect(allUp == TracePins.minimumWakeUpsAllUp)
        // Wifi always up: the windows cover everything, so the mixed minimum is the plain one.
        #expect(WakeFloor.minimumWakeUps(trace: always, allClassesUp: false) == allUp)
        #expect(WakeFloor.minimumWakeUps(trace: partial, allClassesUp: false) == TracePins.minimumWakeUpsPartial)
        // Same writes either way; only wifi differs.
        #expect(partial.writes == always.writes)
    }

    /// The exact minimum by trying every set of moments on a small grid.
    @Test func matchesBruteForceOnSmallRandomInputs() {
        var random = SplitMix64(seed: 42)
        let grid = 12
        var sawMixed = 0
        for case_ in 0..<1_500 {
            var windows: [Range<Int64>] = []
            for _ in 0..<random.int(in: 0...3) {
                let start = Int64(random.int(in: 0...(grid - 1)))
                windows.append(start..<min(start + Int64(random.int(in: 1...4)), Int64(grid)))
            }
            var intervals: [Interval] = []
            for _ in 0..<random.int(in: 1...8) {
                let release = Int64(random.int(in: 0...(grid - 1)))
                let deadline = min(release + Int64(random.int(in: 0...5)), Int64(grid - 1))
                intervals.append(Interval(release: release, deadline: deadline, needsWindow: random.chance(40)))
            }
            let expected = bruteForce(intervals, windows: windows, grid: grid)
            #expect(WakeFloor.minimumWakeUps(intervals, windows: windows) == expected, "case \(case_): \(intervals) \(windows)")
            let anytime = intervals.map { Interval(release: $0.release, deadline: $0.deadline) }
            #expect(WakeFloor.stabs(anytime).count == bruteForce(anytime, windows: [], grid: grid), "case \(case_)")
            if intervals.contains(where: \.needsWindow), intervals.contains(where: { !$0.needsWindow }), !windows.isEmpty {
                sawMixed += 1
            }
        }
        #expect(sawMixed > 300)
    }

    @Test func traceFloorsAreStabbingNumbers() {
        let trace = FrugalTrace.generate(seed: 3, clients: 4, duration: 900_000)
        let delays = Dictionary(uniqueKeysWithValues: trace.tables.map { ($0.name, $0.maxDelay) })
        let all = trace.writes.map { Interval(release: $0.at, deadline: $0.at + (delays[$0.table] ?? 0)) }
        #expect(WakeFloor.minimumWakeUps(trace: trace, allClassesUp: true) == WakeFloor.stabs(all).count)
        // With every writer allowed on cellular, wifi's outages change nothing.
        var cellularOnly = trace
        cellularOnly.tables = trace.tables.map { table in
            var table = table
            table.networks = ["wifi", "cellular"]
            return table
        }
        #expect(
            WakeFloor.minimumWakeUps(trace: cellularOnly, allClassesUp: false)
                == WakeFloor.minimumWakeUps(trace: trace, allClassesUp: true))
    }

    /// The fewest moments on `0..<grid` stabbing every interval (window-only ones inside a
    /// window), after the same rule for window-only intervals lying in an outage.
    func bruteForce(_ intervals: [Interval], windows: [Range<Int64>], grid: Int) -> Int {
        func open(_ t: Int64) -> Bool { windows.contains { $0.contains(t) } }
        var masks: [Int] = []
        for interval in intervals {
            var deadline = interval.deadline
            if interval.needsWindow, !(interval.release...deadline).contains(where: open) {
                guard let next = (deadline + 1..<Int64(grid)).first(where: open) else { continue }
                deadline = next
            }
            var mask = 0
            for t in interval.release...deadline where !interval.needsWindow || open(t) { mask |= 1 << Int(t) }
            masks.append(mask)
        }
        var best = Int.max
        for set in 0..<(1 << grid) where set.nonzeroBitCount < best {
            if masks.allSatisfy({ $0 & set != 0 }) { best = set.nonzeroBitCount }
        }
        return best
    }
}
