import DallyScheduler
import Testing

/// The wakes that do not wait for a deadline: eager uplinks, sync-now, resends, downloads.
/// Each may override the delay, none may override the networks.
@Suite("Scheduler: eager, sync-now, resend, downloads")
struct WakeReasonTests {
    static let now = Fixture.start + Fixture.second
    /// Pending since `start`, due in a minute.
    static let notes = Fixture.table("notes", maxDelay: Fixture.minute, uploads: ["wifi", "cellular"])

    static func situation(_ usable: Set<String>, pending: Bool = true) -> Situation {
        Situation(
            now: now, usable: usable, pending: pending ? ["notes": Fixture.pending(since: Fixture.start)] : [:],
            pulledAt: ["notes": Fixture.start])
    }

    // MARK: Eager

    /// Two wifi uplinks: the plain one is cheaper, only the eager one may wake for the eager reason.
    @Test func anEagerUplinkWakesAtOnceForPendingRows() throws {
        let plain = UplinkRules(name: "wlan0", networkClass: "wifi", cost: 1)
        let eager = UplinkRules(name: "wlan1", networkClass: "wifi", cost: 1, eager: true)
        let scheduler = Scheduler(tables: [Self.notes], uplinks: [plain, eager], flushBytes: .max)
        let deadline = Fixture.start + Fixture.minute

        let woken = try #require(wake(in: scheduler.decide(Self.situation(["wlan0", "wlan1"]))))
        #expect(woken.uplink == "wlan1")
        #expect(woken.reasons == [.eager])
        // The eager uplink down: the plain one of the same class is not woken early.
        #expect(scheduler.decide(Self.situation(["wlan0"])) == .sleep(until: deadline))
        #expect(scheduler.decide(Self.situation([])) == .sleep(until: deadline))
        // Nothing pending: nothing to be eager about.
        let nothing = Self.situation(["wlan0", "wlan1"], pending: false)
        #expect(scheduler.decide(nothing) == .sleep(until: Fixture.start + Fixture.never))
    }

    @Test func anEagerUplinkIgnoresTablesItMayNotCarry() {
        let eagerWired = UplinkRules(name: "eth0", networkClass: "wired", cost: 0, eager: true)
        let scheduler = Scheduler(tables: [Self.notes], uplinks: [eagerWired, Fixture.wifi], flushBytes: .max)
        #expect(scheduler.decide(Self.situation(["eth0"])) == .sleep(until: Fixture.start + Fixture.minute))
    }

    // MARK: Sync-now

    @Test(arguments: [
        (["eth0", "wlan0", "wwan0"], "wlan0"),
        (["eth0", "wwan0"], "wwan0"),
        (["eth0"], nil),
        ([], nil),
    ] as [(Set<String>, String?)])
    func syncNowOverridesTheDelayNeverTheNetworks(usable: Set<String>, expected: String?) {
        let scheduler = Scheduler(
            tables: [Self.notes], uplinks: [Fixture.wired, Fixture.wifi, Fixture.cellular], flushBytes: .max)
        var situation = Self.situation(usable)
        situation.urgentUploads = ["notes"]
        let decision = scheduler.decide(situation)
        #expect(wake(in: decision)?.uplink == expected)
        if expected != nil {
            #expect(wake(in: decision)?.reasons == [.syncNow])
        } else {
            #expect(decision == .sleep(until: Fixture.start + Fixture.minute))
        }
    }

    // MARK: Resend

    /// A batch whose tables allow wifi and cellular is resent over cellular when wifi is gone;
    /// one whose tables allow only wifi — through an upload or a pull table — is not.
    @Test func inFlightBatchesMoveOnlyToClassesAllTheirTablesAllow() throws {
        let both = Fixture.table("both", maxDelay: Fixture.hour, uploads: ["wifi", "cellular"])
        let wifiUp = Fixture.table("wifiUp", maxDelay: Fixture.hour, uploads: ["wifi"])
        let wifiDown = Fixture.table(
            "wifiDown", maxDelay: Fixture.hour, uploads: ["wifi", "cellular"], downloads: ["wifi"])
        let scheduler = Scheduler(
            tables: [both, wifiUp, wifiDown], uplinks: [Fixture.wifi, Fixture.cellular], flushBytes: .max)
        func decide(_ flight: FlightTables) -> Decision {
            scheduler.decide(
                Situation(
                    now: Self.now, usable: ["wwan0"],
                    pulledAt: ["both": Self.now, "wifiUp": Self.now, "wifiDown": Self.now],
                    inFlight: [flight]))
        }

        #expect(scheduler.allowedClasses(uploads: ["both"], pulls: ["both"]) == ["wifi", "cellular"])
        let woken = try #require(wake(in: decide(FlightTables(uploads: ["both"], pulls: ["both"]))))
        #expect(woken.uplink == "wwan0")
        #expect(woken.reasons == [.resend])

        #expect(scheduler.allowedClasses(uploads: ["both", "wifiUp"], pulls: []) == ["wifi"])
        #expect(wake(in: decide(FlightTables(uploads: ["both", "wifiUp"], pulls: []))) == nil)
        #expect(scheduler.allowedClasses(uploads: ["both"], pulls: ["wifiDown"]) == ["wifi"])
        #expect(wake(in: decide(FlightTables(uploads: ["both"], pulls: ["wifiDown"]))) == nil)
    }

    // MARK: Downloads

    static let feed = Fixture.table(
        "feed", maxDelay: Fixture.hour, uploads: ["wired", "wifi", "cellular"], period: 5 * Fixture.minute,
        downloads: ["wifi"])
    static let downloads = Scheduler(
        tables: [feed], uplinks: [Fixture.wired, Fixture.wifi, Fixture.cellular], flushBytes: .max)

    @Test func aPeriodRunningOutWakesOnlyADownloadClass() throws {
        let pulled = Fixture.start
        let due = pulled + 5 * Fixture.minute
        let all: Set<String> = ["eth0", "wlan0", "wwan0"]
        // Wired is cheaper, but the feed may only come down over wifi.
        let woken = try #require(
            wake(in: Self.downloads.decide(Situation(now: due, usable: all, pulledAt: ["feed": pulled]))))
        #expect(woken.uplink == "wlan0")
        #expect(woken.reasons == [.period])
        let forbidden = Situation(now: due, usable: ["eth0", "wwan0"], pulledAt: ["feed": pulled])
        #expect(Self.downloads.decide(forbidden) == .sleep(until: nil))
        // One millisecond early it sleeps until exactly the end of the period.
        let early = Situation(now: due - 1, usable: all, pulledAt: ["feed": pulled])
        #expect(Self.downloads.decide(early) == .sleep(until: due))
        // A table never pulled is due at once.
        #expect(wake(in: Self.downloads.decide(Situation(now: due, usable: all)))?.reasons == [.period])
    }

    @Test func aRequestedPullWakesOnlyADownloadClass() throws {
        let all: Set<String> = ["eth0", "wlan0", "wwan0"]
        var requested = Situation(now: Self.now, usable: all, pulledAt: ["feed": Self.now], urgentPulls: ["feed"])
        let woken = try #require(wake(in: Self.downloads.decide(requested)))
        #expect(woken.uplink == "wlan0")
        #expect(woken.reasons == [.pullRequested])
        requested.usable = ["eth0", "wwan0"]
        #expect(Self.downloads.decide(requested) == .sleep(until: Self.now + 5 * Fixture.minute))
    }

    /// The next time is the earliest of the deadlines and the ends of the periods.
    @Test func nextTimeIsTheEarliestDeadlineOrPeriod() {
        let pulled = Fixture.start
        let pendingSince = Fixture.start - 58 * Fixture.minute  // due at start + 2 min, before the period's 5
        var situation = Situation(
            now: Self.now, usable: ["eth0", "wlan0", "wwan0"], pending: ["feed": Fixture.pending(since: pendingSince)],
            pulledAt: ["feed": pulled])
        #expect(Self.downloads.decide(situation) == .sleep(until: Fixture.start + 2 * Fixture.minute))
        situation.pending = [:]
        #expect(Self.downloads.decide(situation) == .sleep(until: pulled + 5 * Fixture.minute))
    }

    // MARK: Local-only tables

    @Test func localOnlyTablesAreIgnored() {
        let local = TableRules(
            name: "scratch", localOnly: true, maxDelay: 0, uploadNetworks: ["wired"], period: Fixture.second,
            downloadNetworks: ["wired"])
        let scheduler = Scheduler(tables: [local], uplinks: [Fixture.wired], flushBytes: 1)
        #expect(scheduler.scope(of: Fixture.wired).uploads.isEmpty)
        #expect(scheduler.scope(of: Fixture.wired).pulls.isEmpty)
        let situation = Situation(
            now: Self.now, usable: ["eth0"], pending: ["scratch": Fixture.pending(bytes: 10, since: Fixture.start)],
            urgentUploads: ["scratch"], urgentPulls: ["scratch"])
        #expect(scheduler.decide(situation) == .sleep(until: nil))
        #expect(scheduler.stranded(situation).isEmpty)
    }
}
