import DallyCore
import DallyScheduler
import Testing

/// Which uplink wakes, and what rides along: the cheapest usable class a due table allows,
/// never a class it forbids.
@Suite("Scheduler: network policies and cost order")
struct PolicyTests {
    static let everywhere = Fixture.table("logs", maxDelay: Fixture.minute, uploads: ["wired", "wifi", "cellular"])
    static let scheduler = Scheduler(
        tables: [everywhere], uplinks: [Fixture.cellular, Fixture.wifi, Fixture.wired], flushBytes: .max)

    /// A table due now, with `up` usable.
    static func decide(up: Set<String>) -> Decision {
        scheduler.decide(
            Situation(
                now: Fixture.start + Fixture.minute, usable: up,
                pending: ["logs": Fixture.pending(since: Fixture.start)], pulledAt: ["logs": Fixture.start]))
    }

    @Test(arguments: [
        (["eth0", "wlan0", "wwan0"], "eth0"),
        (["wlan0", "wwan0"], "wlan0"),
        (["eth0", "wwan0"], "eth0"),
        (["wwan0"], "wwan0"),
        (["eth0"], "eth0"),
    ] as [(Set<String>, String)])
    func cheapestUsableClassFirst(up: Set<String>, expected: String) throws {
        let woken = try #require(wake(in: Self.decide(up: up)))
        #expect(woken.uplink == expected)
        #expect(woken.reasons == [.deadline])
    }

    @Test func nothingUsableMeansNoWake() {
        #expect(Self.decide(up: []) == .sleep(until: Fixture.start + Fixture.never))
    }

    /// Between uplinks of the same cost, the order given wins.
    @Test func equalCostFollowsTheOrderGiven() throws {
        let second = UplinkRules(name: "wlan1", networkClass: "wifi", cost: 1)
        for (uplinks, expected) in [([Fixture.wifi, second], "wlan0"), ([second, Fixture.wifi], "wlan1")] {
            let scheduler = Scheduler(tables: [Self.everywhere], uplinks: uplinks, flushBytes: .max)
            let decision = scheduler.decide(
                Situation(
                    now: Fixture.start + Fixture.minute, usable: ["wlan0", "wlan1"],
                    pending: ["logs": Fixture.pending(since: Fixture.start)], pulledAt: ["logs": Fixture.start]))
            #expect(wake(in: decision)?.uplink == expected)
        }
    }

    /// A deadline wakes wifi; the far-off table that allows wifi goes in the same wake, the one
    /// that forbids wifi waits for its own deadline on cellular.
    @Test func piggybackTakesEverythingTheClassMayCarry() throws {
        let due = Fixture.table("due", maxDelay: 10 * Fixture.second, uploads: ["wifi"])
        let far = Fixture.table("far", maxDelay: 10 * Fixture.minute, uploads: ["wifi", "cellular"])
        // It may come down over wifi, but not go up.
        let forbids = Fixture.table(
            "forbids", maxDelay: 10 * Fixture.minute, uploads: ["cellular"], downloads: ["wifi", "cellular"])
        let scheduler = Scheduler(tables: [due, far, forbids], uplinks: [Fixture.wifi, Fixture.cellular], flushBytes: .max)
        #expect(scheduler.scope(of: Fixture.wifi).uploads == ["due", "far"])
        #expect(scheduler.scope(of: Fixture.cellular).uploads == ["far", "forbids"])
        #expect(scheduler.scope(of: Fixture.wifi).pulls == ["due", "far", "forbids"])

        var simulator = TraceSimulator(scheduler: scheduler, start: Fixture.start)
        simulator.run(
            [
                TraceWrite(at: Fixture.start, table: "far", row: 1),
                TraceWrite(at: Fixture.start, table: "forbids", row: 1),
                TraceWrite(at: Fixture.start + Fixture.second, table: "due", row: 1),
            ], availability: AvailabilitySchedule(up: ["wlan0", "wwan0"]))

        #expect(simulator.wakes.map(\.uplink) == ["wlan0", "wwan0"])
        #expect(simulator.wakes.map(\.at) == [Fixture.start + 11 * Fixture.second, Fixture.start + 10 * Fixture.minute])
        #expect(simulator.wakes.map { $0.sent.map(\.table) } == [["due", "far"], ["forbids"]])
        #expect(simulator.wakes.map(\.reasons) == [[.deadline], [.deadline]])
    }

    /// Several things due at once: the cheapest uplink any of them may use goes first, and its
    /// reasons are only those of the items it serves (not the deadline waiting for cellular).
    @Test func theCheapestDueUplinkGoesFirstWithItsOwnReasons() throws {
        let late = Fixture.table("late", maxDelay: Fixture.second, uploads: ["cellular"])
        let big = Fixture.table("big", maxDelay: Fixture.hour, uploads: ["wifi"])
        let scheduler = Scheduler(tables: [late, big], uplinks: [Fixture.wifi, Fixture.cellular], flushBytes: 1_000)
        let situation = Situation(
            now: Fixture.start + Fixture.minute, usable: ["wlan0", "wwan0"],
            pending: [
                "late": Fixture.pending(since: Fixture.start), "big": Fixture.pending(bytes: 2_000, since: Fixture.start),
            ],
            pulledAt: ["late": Fixture.start, "big": Fixture.start])
        let woken = try #require(wake(in: scheduler.decide(situation)))
        #expect(woken.uplink == "wlan0")
        #expect(woken.reasons == [.size])
    }

    /// Cost comes before the number of wakes: with overlapping policies the scheduler may wake
    /// twice where one wake of the dearer class would meet every deadline. (So the stabbing
    /// optimum holds per class, as above, not across classes with shared tables.)
    @Test func cheapestClassFirstMayCostAnExtraWake() {
        let either = Fixture.table("either", maxDelay: 10 * Fixture.second, uploads: ["wifi", "cellular"])
        let cellularOnly = Fixture.table("cellularOnly", maxDelay: 11 * Fixture.second, uploads: ["cellular"])
        let scheduler = Scheduler(
            tables: [either, cellularOnly], uplinks: [Fixture.wifi, Fixture.cellular], flushBytes: .max)
        var simulator = TraceSimulator(scheduler: scheduler, start: Fixture.start)
        let writes = [
            TraceWrite(at: Fixture.start, table: "either", row: 1),
            TraceWrite(at: Fixture.start, table: "cellularOnly", row: 1),
        ]
        simulator.run(writes, availability: AvailabilitySchedule(up: ["wlan0", "wwan0"]))
        #expect(stabbingOptimum(deadlineIntervals(writes, scheduler.tables)).count == 1)
        #expect(simulator.wakes.map(\.uplink) == ["wlan0", "wwan0"])
        #expect(simulator.wakes.map(\.at) == [Fixture.start + 10 * Fixture.second, Fixture.start + 11 * Fixture.second])
    }

    /// Random tables on random subsets of the classes, uplinks flapping every few seconds, random
    /// writes; after the hour every uplink comes up for good. No row may travel over a class its
    /// table forbids, every row goes up in the end, and no row waits past its deadline while an
    /// uplink its table allows is usable — nor past the first moment one is after it.
    @Test(arguments: [false, true])
    func policiesHoldUnderFlappingAvailability(eagerUplinks: Bool) {
        let wifi2 = UplinkRules(name: "wlan1", networkClass: "wifi", cost: 1)
        var late = 0
        for seed in UInt64(1)...200 {
            var rng = SplitMix64(seed: (eagerUplinks ? 20_000 : 10_000) + seed)
            // Download classes differ from upload classes, so mixing them up breaks the policy.
            let tables = randomTables(&rng, classes: randomClasses, downloads: randomClasses)
            let uplinks = [Fixture.wired, Fixture.wifi, wifi2, Fixture.cellular].map { uplink in
                UplinkRules(
                    name: uplink.name, networkClass: uplink.networkClass, cost: uplink.cost,
                    eager: eagerUplinks && rng.roughChance(30))
            }
            let writes = randomWrites(&rng, tables: tables)
            let end = Fixture.start + Fixture.hour
            let availability = flapping(&rng, uplinks.map(\.name), until: end)
            let scheduler = Scheduler(tables: tables, uplinks: uplinks, flushBytes: .max)
            var simulator = TraceSimulator(scheduler: scheduler, start: Fixture.start)
            simulator.run(writes, availability: availability)

            expectPoliciesKept(simulator, tables, "seed \(seed)")
            #expect(simulator.pendingRows == 0, "seed \(seed): rows never sent")
            #expect(simulator.now >= writes.map(\.at).max()!, "seed \(seed): the trace did not run to its end")
            let final = simulator.situation(usable: Set(uplinks.map(\.name)))
            #expect(scheduler.stranded(final).isEmpty, "seed \(seed)")
            #expect(simulator.sent.count == dirtyEpisodes(writes, wakes: simulator.wakes), "seed \(seed)")

            let allowedUplinks = Dictionary(
                uniqueKeysWithValues: tables.map { table in
                    (table.name, uplinks.filter { table.uploadNetworks.contains($0.networkClass) }.map(\.name))
                })
            for row in simulator.sent {
                let allowed = allowedUplinks[row.table]!
                // Usable at the deadline means up by the schedule at that instant: a change at
                // the deadline itself already counts.
                if allowed.contains(where: { availability.isUp($0, at: row.deadline) }) {
                    #expect(row.sentAt <= row.deadline, "seed \(seed): \(row) missed with an allowed uplink up")
                }
                // Stronger: sent no later than the first moment at or after the deadline when an
                // allowed uplink is up (the schedule ends with all up, so there is one).
                let firstChance = availability.firstUp(of: allowed, atOrAfter: row.deadline)!
                #expect(row.sentAt <= firstChance, "seed \(seed): \(row) waited past \(firstChance)")
                if row.sentAt > row.deadline { late += 1 }
            }
        }
        // Flapping made some rows miss their deadline, so the availability part was exercised.
        #expect(late > 100)
    }
}

/// Each uplink starts up or down at random and flips every 1–30 s until `end`, where all come up for good.
func flapping(_ rng: inout SplitMix64, _ uplinks: [String], until end: Int64) -> AvailabilitySchedule {
    var initial: [String: Bool] = [:]
    var changes: [(at: Int64, uplink: String, up: Bool)] = []
    for uplink in uplinks {
        var up = rng.roughChance(50)
        initial[uplink] = up
        var t = Fixture.start + rng.int(Fixture.second...30 * Fixture.second)
        while t < end {
            up.toggle()
            changes.append((t, uplink, up))
            t += rng.int(Fixture.second...30 * Fixture.second)
        }
        if !up { changes.append((end, uplink, true)) }
    }
    return AvailabilitySchedule(initial: initial, changes: changes)
}
