import DallyScheduler
import Testing

/// Deadlines that cannot be met, the size bound, and backoff: when the scheduler must not
/// wake, and until exactly when it sleeps.
@Suite("Scheduler: misses, size bound, backoff")
struct DeadlineTests {
    /// Goes up over wifi only, though it may come down over cellular too.
    static let wifiOnly = Fixture.table(
        "photos", maxDelay: 10 * Fixture.second, uploads: ["wifi"], downloads: ["wifi", "cellular"])
    static let scheduler = Scheduler(tables: [wifiOnly], uplinks: [Fixture.wifi, Fixture.cellular], flushBytes: 1_000)
    static let deadline = Fixture.start + 10 * Fixture.second

    static func situation(at now: Int64, usable: Set<String>, bytes: Int64 = 100) -> Situation {
        Situation(
            now: now, usable: usable, pending: ["photos": Fixture.pending(bytes: bytes, since: Fixture.start)],
            pulledAt: ["photos": Fixture.start])
    }

    // MARK: Misses

    @Test func aDeadlinePassingWithOnlyForbiddenClassesUpIsStranded() throws {
        let late = Self.situation(at: Self.deadline + 5 * Fixture.second, usable: ["wwan0"])
        let stranded = Self.scheduler.stranded(late)
        #expect(stranded.map(\.table) == ["photos"])
        #expect(stranded.map(\.deadline) == [Self.deadline])
        // It sleeps (the deadline is past, so only the far pull is left), never wakes cellular.
        #expect(Self.scheduler.decide(late) == .sleep(until: Fixture.start + Fixture.never))

        // The allowed uplink comes up: wake it at once, for the deadline.
        let up = Self.situation(at: Self.deadline + 5 * Fixture.second, usable: ["wwan0", "wlan0"])
        #expect(Self.scheduler.stranded(up).isEmpty)
        let woken = try #require(wake(in: Self.scheduler.decide(up)))
        #expect(woken.uplink == "wlan0")
        #expect(woken.reasons == [.deadline])
    }

    @Test func notStrandedBeforeTheDeadline() {
        let early = Self.situation(at: Self.deadline - 1, usable: [])
        #expect(Self.scheduler.stranded(early).isEmpty)
        #expect(Self.scheduler.decide(early) == .sleep(until: Self.deadline))
        // At the deadline itself it is due.
        #expect(Self.scheduler.stranded(Self.situation(at: Self.deadline, usable: [])).map(\.table) == ["photos"])
    }

    /// The same through the simulator: wifi down for the first 30 s, cellular up throughout.
    @Test func aMissedDeadlineGoesTheMomentTheAllowedUplinkComesUp() throws {
        var simulator = TraceSimulator(scheduler: Self.scheduler, start: Fixture.start)
        let wifiBack = Fixture.start + 30 * Fixture.second
        simulator.run(
            [TraceWrite(at: Fixture.start, table: "photos", row: 7)],
            availability: AvailabilitySchedule(
                initial: ["wlan0": false, "wwan0": true], changes: [(wifiBack, "wlan0", true)]))

        #expect(simulator.wakes.map(\.at) == [wifiBack])
        #expect(simulator.wakes.map(\.uplink) == ["wlan0"])
        #expect(simulator.wakes.map(\.reasons) == [[.deadline]])
        #expect(simulator.sent.map(\.row) == [7])
        // It woke at the deadline, found only cellular, and slept without waking anything.
        #expect(simulator.strandedReports.map(\.at) == [Self.deadline])
        #expect(simulator.strandedReports.first?.tables.map(\.deadline) == [Self.deadline])
        #expect(simulator.decisions.filter { wake(in: $0.decision) != nil }.map(\.at) == [wifiBack])
    }

    // MARK: Size bound

    @Test func pendingBytesAtTheBoundWakeAtOnce() throws {
        let now = Fixture.start + Fixture.second
        let below = Self.situation(at: now, usable: ["wlan0"], bytes: 999)
        #expect(Self.scheduler.decide(below) == .sleep(until: Self.deadline))
        for bytes: Int64 in [1_000, 50_000] {
            let full = Self.situation(at: now, usable: ["wlan0"], bytes: bytes)
            let woken = try #require(wake(in: Self.scheduler.decide(full)))
            #expect(woken.uplink == "wlan0")
            #expect(woken.reasons == [.size])
        }
        // The size bound overrides the delay, never the networks.
        let forbidden = Self.situation(at: now, usable: ["wwan0"], bytes: 5_000)
        #expect(Self.scheduler.decide(forbidden) == .sleep(until: Self.deadline))
    }

    /// 300-byte rows every second against a 1000-byte bound: every fourth write fills it,
    /// long before the 10 s deadline.
    @Test func sizeBoundThroughTheSimulator() {
        var simulator = TraceSimulator(scheduler: Self.scheduler, start: Fixture.start)
        let writes = (0..<8).map {
            TraceWrite(at: Fixture.start + Int64($0) * Fixture.second, table: "photos", row: $0, bytes: 300)
        }
        simulator.run(writes, availability: AvailabilitySchedule(up: ["wlan0", "wwan0"]))
        #expect(simulator.wakes.map(\.at) == [Fixture.start + 3 * Fixture.second, Fixture.start + 7 * Fixture.second])
        #expect(simulator.wakes.map(\.reasons) == [[.size], [.size]])
        #expect(simulator.wakes.map(\.sent.count) == [4, 4])
    }

    // MARK: Backoff

    @Test func aBackingOffUplinkWithSomethingDueSleepsUntilItsRetry() {
        let retryAt = Self.deadline + 7 * Fixture.second
        var late = Self.situation(at: Self.deadline + Fixture.second, usable: ["wwan0"])
        late.backingOff = ["wlan0": retryAt]
        #expect(Self.scheduler.decide(late) == .sleep(until: retryAt))

        // An earlier deadline of another table still comes first.
        let other = Fixture.table("other", maxDelay: 15 * Fixture.second, uploads: ["cellular"])
        let scheduler = Scheduler(
            tables: [Self.wifiOnly, other], uplinks: [Fixture.wifi, Fixture.cellular], flushBytes: .max)
        late.pending["other"] = Fixture.pending(since: Fixture.start)
        late.usable = []
        late.pulledAt["other"] = Fixture.start
        #expect(scheduler.decide(late) == .sleep(until: Fixture.start + 15 * Fixture.second))
    }

    @Test func aBackoffNothingWaitsForDoesNotShortenTheSleep() {
        // Nothing due yet: the retry is irrelevant, the deadline is the next event.
        var early = Self.situation(at: Fixture.start + Fixture.second, usable: [])
        early.backingOff = ["wlan0": Fixture.start + 2 * Fixture.second]
        #expect(Self.scheduler.decide(early) == .sleep(until: Self.deadline))
        // Due, but only on wifi: cellular's retry is irrelevant.
        var late = Self.situation(at: Self.deadline + Fixture.second, usable: [])
        late.backingOff = ["wwan0": Self.deadline + 2 * Fixture.second]
        #expect(Self.scheduler.decide(late) == .sleep(until: Fixture.start + Fixture.never))
    }

    /// An eager item can only be served by its own uplink, so another uplink of the same class
    /// coming out of backoff serves nothing, and must not cut the sleep short (it once did:
    /// backoffs were matched to due items by class alone).
    @Test
    func aBackoffOfAnotherUplinkDoesNotEndAnEagerWait() {
        let plain = UplinkRules(name: "wlan0", networkClass: "wifi", cost: 1)
        let eager = UplinkRules(name: "wlan1", networkClass: "wifi", cost: 1, eager: true)
        let notes = Fixture.table("notes", maxDelay: Fixture.minute, uploads: ["wifi"])
        let scheduler = Scheduler(tables: [notes], uplinks: [plain, eager], flushBytes: .max)
        let situation = Situation(
            now: Fixture.start + Fixture.second, usable: [], backingOff: ["wlan0": Fixture.start + 10 * Fixture.second],
            pending: ["notes": Fixture.pending(since: Fixture.start)], pulledAt: ["notes": Fixture.start])
        // At start + 10 s only wlan0 becomes usable, and nothing is due for it: the next event is the deadline.
        #expect(scheduler.decide(situation) == .sleep(until: Fixture.start + Fixture.minute))
    }
}
