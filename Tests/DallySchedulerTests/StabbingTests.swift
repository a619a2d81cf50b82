import DallyCore
import DallyScheduler
import Testing

/// With every class up, waking at the earliest deadline and taking everything pending is the
/// greedy algorithm for interval stabbing: the scheduler must wake exactly as often, and at
/// exactly the times, the textbook greedy computes from the writes alone.
@Suite("Scheduler: wake count is the interval-stabbing optimum")
struct StabbingTests {
    static let traces: UInt64 = 200

    @Test func oneClassAllUpWakesTheOptimalNumberOfTimes() {
        var totalWakes = 0
        for seed in 1...Self.traces {
            var rng = SplitMix64(seed: seed)
            let tables = randomTables(&rng) { _ in ["wifi"] }
            let writes = randomWrites(&rng, tables: tables)
            let scheduler = Scheduler(tables: tables, uplinks: [Fixture.wifi], flushBytes: .max)
            var simulator = TraceSimulator(scheduler: scheduler, start: Fixture.start)
            simulator.run(writes, availability: AvailabilitySchedule(up: [Fixture.wifi.name]))

            // Coalescing does not change the optimum: a write to a pending row lies inside the
            // interval of the write that made it dirty, and goes in the same wake.
            let optimum = stabbingOptimum(deadlineIntervals(writes, tables))
            #expect(simulator.wakes.count == optimum.count, "seed \(seed)")
            #expect(simulator.wakes.map(\.at) == optimum, "seed \(seed): wake times")
            #expect(simulator.wakes.allSatisfy { $0.reasons == [.deadline] }, "seed \(seed)")
            #expect(simulator.wakes.allSatisfy { !$0.sent.isEmpty }, "seed \(seed): a wake that sent nothing")
            #expect(simulator.sent.allSatisfy { $0.sentAt <= $0.deadline }, "seed \(seed): a row sent late")
            #expect(simulator.pendingRows == 0, "seed \(seed)")
            // Every write was sent: as many sent rows as dirty episodes (writes minus coalesced ones).
            #expect(simulator.sent.count == dirtyEpisodes(writes, wakes: simulator.wakes), "seed \(seed)")
            totalWakes += simulator.wakes.count
        }
        // The traces are not trivial: on average several wakes each.
        #expect(totalWakes > 3 * Int(Self.traces))
    }

    /// Tables only on wifi and tables only on cellular never share a wake: each class stabs its
    /// own intervals optimally, and nothing travels over a class its policy forbids.
    @Test func disjointClassesWakeTheSumOfTheirOptima() {
        var sawBoth = 0
        for seed in 1...Self.traces {
            var rng = SplitMix64(seed: 1_000 + seed)
            let tables = randomTables(&rng, count: 2...6) { rng in rng.roughChance(50) ? ["wifi"] : ["cellular"] }
            let writes = randomWrites(&rng, tables: tables)
            let scheduler = Scheduler(tables: tables, uplinks: [Fixture.cellular, Fixture.wifi], flushBytes: .max)
            var simulator = TraceSimulator(scheduler: scheduler, start: Fixture.start)
            simulator.run(writes, availability: AvailabilitySchedule(up: [Fixture.wifi.name, Fixture.cellular.name]))

            func optimum(_ networkClass: String) -> Int {
                let names = Set(tables.filter { $0.uploadNetworks == [networkClass] }.map(\.name))
                return stabbingOptimum(deadlineIntervals(writes.filter { names.contains($0.table) }, tables)).count
            }
            let wifiWakes = simulator.wakes.filter { $0.uplink == Fixture.wifi.name }.count
            let cellularWakes = simulator.wakes.filter { $0.uplink == Fixture.cellular.name }.count
            #expect(wifiWakes == optimum("wifi"), "seed \(seed)")
            #expect(cellularWakes == optimum("cellular"), "seed \(seed)")
            #expect(simulator.wakes.count == optimum("wifi") + optimum("cellular"), "seed \(seed)")
            expectPoliciesKept(simulator, tables, "seed \(seed)")
            #expect(simulator.sent.allSatisfy { $0.sentAt <= $0.deadline }, "seed \(seed): a row sent late")
            #expect(simulator.pendingRows == 0, "seed \(seed)")
            if wifiWakes > 0, cellularWakes > 0 { sawBoth += 1 }
        }
        #expect(sawBoth > Int(Self.traces) / 2)
    }
}

/// How many rows a trace sends given its wakes: a write starts a new dirty episode unless its
/// row is still pending, i.e. no wake that sent its table came between the episode's start
/// and the write.
func dirtyEpisodes(_ writes: [TraceWrite], wakes: [WakeRecord]) -> Int {
    var episodeStart: [String: Int64] = [:]
    var episodes = 0
    for write in writes.sorted(by: { $0.at < $1.at }) {
        let key = "\(write.table)/\(write.row)"
        // Writes at a wake's time are applied before it, so a wake at t sends writes at t.
        let lastSend = wakes.last { $0.at < write.at && $0.uploadScope.contains(write.table) }?.at
        if let start = episodeStart[key], start > (lastSend ?? .min) { continue }
        episodeStart[key] = write.at
        episodes += 1
    }
    return episodes
}

/// No row went up over a class its table's policy forbids.
func expectPoliciesKept(
    _ simulator: TraceSimulator, _ tables: [TableRules], _ comment: Comment,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let allowed = Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0.uploadNetworks) })
    for row in simulator.sent where !(allowed[row.table]?.contains(row.networkClass) ?? false) {
        Issue.record("\(comment): \(row.table)/\(row.row) sent over \(row.networkClass)", sourceLocation: sourceLocation)
    }
}
