import DallyCore
import DallyObjects
import DallyScheduler
import DallyStore
import Logging
import Synchronization

/// Asks the ``Scheduler`` what to do, acts, repeats: the heart of the engine.
///
/// It looks at the outbox, the download periods, the batches in flight, the sync-now requests
/// and which uplinks are usable; it runs a ``SyncCycle`` on the uplink the scheduler says to
/// wake, or sleeps on the injected clock until the next deadline or until something changes
/// (a commit that moves the plan earlier, a sync-now, a notification, an uplink coming up),
/// whichever comes first. Wake-ups are the radio's cost: the loop wakes for nothing else.
final class DecisionLoop<C: Clock>: Sendable where C.Duration == Duration {
    private struct State {
        /// A new decision was asked for while the loop was not waiting.
        var poked = false
        var wakeup: CheckedContinuation<Void, Never>?
        /// When the loop plans to wake (ms since 1970); nil while it is busy or waits for an
        /// event only. A write whose deadline comes earlier pokes it.
        var plannedWake: Int64?
        /// Whether the loop waits with nothing to do now, and the wake it planned (for `/stats`).
        var idle = false
        /// The last look found no uplink available (each down by its probe or its override, not
        /// merely waiting out a backoff): until a probe or an override brings one back, which
        /// wakes the loop, no write can call for a wake.
        var noUplinkAvailable = false
        /// Looks at the outbox that ended in a decision, since start.
        var decisions: Int64 = 0
        var nextWakeAt: Int64?
        /// Per table: pending bytes as of the last look at the outbox plus what commits added
        /// since, an upper bound that tells when the size bound may have been passed.
        var pendingBytes: [String: Int64] = [:]
        /// Per table, the deadline already counted as missed, and how many were.
        var missedDeadline: [String: Int64] = [:]
        var deadlineMisses: [String: Int64] = [:]
    }

    private let store: ReplicaStore
    private let scheduler: Scheduler
    private let uplinks: [Uplink]
    private let requests: SyncRequests
    private let cycle: SyncCycle
    private let declarations: DeclarationCheck
    private let backoff: Backoff
    private let clock: C
    private let now: @Sendable () -> Int64
    private let logger: Logger
    private let stop: StopFlag
    private let state = Mutex(State())

    init(
        store: ReplicaStore, scheduler: Scheduler, uplinks: [Uplink], requests: SyncRequests, cycle: SyncCycle,
        declarations: DeclarationCheck, backoff: Backoff, clock: C, now: @escaping @Sendable () -> Int64, logger: Logger,
        stop: StopFlag
    ) {
        self.store = store
        self.scheduler = scheduler
        self.uplinks = uplinks
        self.requests = requests
        self.cycle = cycle
        self.declarations = declarations
        self.backoff = backoff
        self.clock = clock
        self.now = now
        self.logger = logger
        self.stop = stop
    }

    /// Whether the loop waits with nothing to do now: no poke pending, and the time it planned
    /// to wake (if any) still ahead.
    var isQuiet: Bool {
        let now = self.now()
        return state.withLock { state in
            state.wakeup != nil && !state.poked && (state.plannedWake.map { $0 > now } ?? true)
        }
    }

    /// Whether the loop is idle, when it plans to wake, per table the deadlines missed, and
    /// how many decisions it made.
    var schedule: (idle: Bool, nextWakeAt: Int64?, deadlineMisses: [String: Int64], decisions: Int64) {
        state.withLock { ($0.idle, $0.nextWakeAt, $0.deadlineMisses, $0.decisions) }
    }

    func run() async {
        var storeFailures = 0
        while !stop.isRaised {
            // After the cycle that ran last, never during one (``SyncRequests/takeRetries()``).
            let retries = requests.takeRetries()
            for uplink in uplinks where retries.contains(uplink.name) { uplink.endBackoff() }
            let situation: Situation
            do {
                situation = try await look()
                storeFailures = 0
            } catch {
                if stop.isRaised { return }
                storeFailures += 1
                let delay = backoff.delay(afterFailures: storeFailures, unit: Double.random(in: 0..<1))
                logger.error("cannot read the outbox; retrying", metadata: ["error": "\(error)", "retry_in": "\(DurationText.format(delay))"])
                guard await clock.pause(for: delay) else { return }
                continue
            }
            state.withLock { $0.decisions += 1 }
            countMisses(scheduler.stranded(situation))
            switch scheduler.decide(situation) {
            case .wake(let wake):
                guard let uplink = uplinks.first(where: { $0.name == wake.uplink }) else { continue }
                let requestsBefore = uplink.counters.requests
                await cycle.run(
                    on: uplink, reasons: wake.reasons, duePulls: scheduler.duePulls(situation),
                    rowsCall: { try await self.rowsCall() })
                if uplink.counters.requests == requestsBefore {
                    // The scheduler saw work the cycle could not do (or the store failed before
                    // a request): do not spin on it.
                    logger.warning(
                        "a wake-up sent nothing; deciding again after retry_min or a change",
                        metadata: ["uplink": "\(uplink.name)", "reasons": "\(wake.reasons.map(\.rawValue).sorted())"])
                    await waitForPoke(until: now() + backoff.minimum.milliseconds)
                }
            case .sleep(let until):
                requests.answer(
                    asked: (situation.urgentUploads, situation.urgentPulls), backingOff: !situation.backingOff.isEmpty,
                    lastError: cycle.counts.lastError)
                await waitForPoke(until: until)
            }
        }
    }

    /// Asks for a new decision now.
    func poke() {
        let wakeup = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let wakeup = state.wakeup else {
                state.poked = true
                return nil
            }
            state.wakeup = nil
            return wakeup
        }
        wakeup?.resume()
    }

    /// Decides whether a commit can move the plan earlier, and pokes the loop if so: a table
    /// that became dirty with a deadline before the planned wake, a table past the size bound,
    /// or changes an eager uplink may carry.
    func noticeCommit(_ notice: ReplicaStore.CommitNotice) {
        guard !notice.outbox.isEmpty else { return }
        let now = self.now()
        let eagerClasses = Set(uplinks.filter { $0.config.eager && $0.isUsable(at: now) }.map(\.config.networkClass))
        let wake = state.withLock { state -> Bool in
            // With no uplink to carry them, new deadlines cannot move the plan: deciding again
            // after every write only read the outbox again (1.5× the gateway's CPU for a
            // backlog written a row at a time while the cloud was down, docs/BENCHMARKS.md).
            if state.idle, state.noUplinkAvailable { return false }
            var wake = !state.idle
            for (table, growth) in notice.outbox {
                guard let rules = scheduler.rules(of: table) else { continue }
                let bytes = state.pendingBytes[table, default: 0] + growth.bytes
                state.pendingBytes[table] = bytes
                if bytes >= scheduler.flushBytes { wake = true }
                if let first = growth.firstDirtyAt, first + rules.maxDelay < (state.plannedWake ?? .max) { wake = true }
                // A write may also have queued an object, whose deadline follows its own delay.
                if let objects = scheduler.rules(of: ObjectStream.name(of: table)),
                    now + objects.maxDelay < (state.plannedWake ?? .max)
                {
                    wake = true
                }
                if !eagerClasses.isDisjoint(with: rules.uploadNetworks) { wake = true }
            }
            return wake
        }
        if wake { poke() }
    }

    /// Which uplink, if any, rows (objects and pulls aside) call for now: a row deadline, a size
    /// bound, a sync-now or an eager uplink that the scheduler would answer by a wake. Asked
    /// between the chunks of a long object walk.
    func rowsCall() async throws -> String? {
        var situation = try await look()
        situation.pending = situation.pending.filter { ObjectStream.table(of: $0.key) == nil }
        situation.urgentUploads = situation.urgentUploads.filter { ObjectStream.table(of: $0) == nil }
        situation.urgentPulls = []
        situation.inFlight = []
        situation.pulledAt = Dictionary(scheduler.tables.map { ($0.name, situation.now) }) { first, _ in first }
        guard case .wake(let wake) = scheduler.decide(situation),
            !wake.reasons.isDisjoint(with: [.deadline, .size, .syncNow, .eager])
        else { return nil }
        return wake.uplink
    }

    /// The situation now: the outbox and pulls from the store, the rest from memory.
    private func look() async throws -> Situation {
        let backlog = try await store.syncBacklog()
        let (summaries, flights) = (backlog.outbox, backlog.inFlight)
        let now = self.now()
        var situation = Situation(now: now, usable: [], pulledAt: backlog.pulledAt)
        // What the cloud would refuse of a table whose declaration differs from its own
        // (``DeclarationCheck``) calls for nothing: held changes wait, held pulls are never
        // due, and a sync-now of them is answered at once.
        let held = declarations.heldForDecisions
        let (heldPulls, heldUploads) = (held.pulls, held.uploads)
        for table in heldPulls { situation.pulledAt[table] = now }
        requests.drop(uploads: heldUploads, pulls: heldPulls)
        for uplink in uplinks {
            let availability = uplink.availability
            if availability.isUsable(at: now) {
                situation.usable.insert(uplink.name)
            } else if availability.isAvailable, let retryAt = availability.retryAt {
                situation.backingOff[uplink.name] = retryAt
            }
        }
        for summary in summaries where summary.pending > 0 && !heldUploads.contains(summary.table) {
            situation.pending[summary.table] = PendingUploads(
                rows: summary.pending, bytes: summary.bytes, oldestFirstDirtyAt: summary.oldestFirstDirtyAt)
        }
        for summary in backlog.objectUploads where summary.objects > 0 {
            situation.pending[ObjectStream.name(of: summary.table)] = PendingUploads(
                rows: summary.objects, bytes: summary.bytes, oldestFirstDirtyAt: summary.oldestFirstDirtyAt)
        }
        // An object stream's download period runs from its oldest queued download; with
        // nothing queued there is nothing to fetch, so its period starts now.
        for table in scheduler.tables.compactMap({ ObjectStream.table(of: $0.name) }) {
            situation.pulledAt[ObjectStream.name(of: table)] = backlog.objectDownloadsQueuedAt[table] ?? now
        }
        // A batch in flight that carries a held table waits with it: no wake can resend it.
        situation.inFlight = flights.filter { heldUploads.isDisjoint(with: $0.uploads) && heldPulls.isDisjoint(with: $0.pulls) }
            .map { FlightTables(uploads: $0.uploads, pulls: $0.pulls) }
        state.withLock { state in
            state.pendingBytes = Dictionary(uniqueKeysWithValues: summaries.map { ($0.table, $0.bytes) })
            state.noUplinkAvailable = situation.usable.isEmpty && situation.backingOff.isEmpty
        }
        let pending = situation.pending
        (situation.urgentUploads, situation.urgentPulls) = requests.prune { table in
            pending[table] != nil || flights.contains { $0.uploads.contains(table) }
        }
        return situation
    }

    /// Counts each table's deadline that passes with no allowed uplink usable, once.
    private func countMisses(_ stranded: [(table: String, deadline: Int64)]) {
        let fresh = state.withLock { state in
            stranded.filter { entry in
                guard state.missedDeadline[entry.table] != entry.deadline else { return false }
                state.missedDeadline[entry.table] = entry.deadline
                state.deadlineMisses[entry.table, default: 0] += 1
                return true
            }
        }
        for entry in fresh {
            logger.warning(
                "deadline passed with no allowed uplink available; the changes wait for one",
                metadata: ["table": "\(entry.table)", "deadline_ms": "\(entry.deadline)"])
        }
    }

    /// Waits for a poke, or until `time` (ms since 1970) on the clock.
    private func waitForPoke(until time: Int64?) async {
        let timer: Task<Void, Never>? = time.map { time in
            // The deadline is fixed now, not when the task first runs: time may move before
            // it does (a busy machine, or a test's clock), and the wake must not move with it.
            let deadline = clock.now.advanced(by: .milliseconds(max(0, time - now())))
            return Task { [weak self, clock] in
                guard await clock.pause(until: deadline) else { return }
                self?.poke()
            }
        }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.poked || stop.isRaised {
                    state.poked = false
                    return true
                }
                state.wakeup = continuation
                state.plannedWake = time
                state.idle = true
                state.nextWakeAt = time
                return false
            }
            if now { continuation.resume() }
        }
        state.withLock { state in
            state.plannedWake = nil
            state.idle = false
        }
        timer?.cancel()
    }
}
