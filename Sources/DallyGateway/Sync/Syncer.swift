import DallyConfig
import DallyCore
import DallyObjects
import DallyScheduler
import DallyStore
import DallySync
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Moves changes between the replica and the cloud, when the ``Scheduler`` says and over the
/// uplinks it picks.
///
/// The decision loop asks the scheduler what to do given the outbox, the download periods, the
/// batches in flight, sync-now requests and which uplinks are usable; it runs a cycle on the
/// uplink it is told to wake, or sleeps on the injected clock until the next deadline or until
/// something changes (a write that moves the plan earlier, a sync-now, a notification, an
/// uplink coming up). A cycle sends every pending change its uplink's class may carry, each
/// batch persisted as in flight before it leaves, and pulls every table that may come down
/// over it. Beside it run one probe loop per uplink and one notify long-poll.
///
/// Times that must outlive the process (first-dirty times, pulls) are wall-clock milliseconds
/// from `now`; the clock only sleeps. Tests inject both, so they move time by hand.
public final class Syncer<C: Clock>: Service, SyncControl where C.Duration == Duration {
    struct State {
        /// A new decision was asked for while the loop was not waiting.
        var poked = false
        var wakeup: CheckedContinuation<Void, Never>?
        /// When the loop plans to wake (ms since 1970); nil while it is busy or waits for an
        /// event only. A write whose deadline comes earlier pokes it.
        var plannedWake: Int64?
        /// Per table: pending bytes as of the last look at the outbox plus what commits added
        /// since, an upper bound that tells when the size bound may have been passed.
        var pendingBytes: [String: Int64] = [:]
        var urgentUploads: Set<String> = []
        var urgentPulls: Set<String> = []
        var waiters: [(table: String, continuation: CheckedContinuation<SyncOutcome, Never>)] = []
        /// What cycles did since the waiters were last answered.
        var report = SyncReport()
        var stopped = false
        var status = SyncStatus()
        /// Per table, the deadline already counted as missed.
        var missedDeadline: [String: Int64] = [:]
        /// Per batch id, the uplink it was last sent on.
        var lastUplink: [String: String] = [:]
    }

    let store: ReplicaStore
    let link: CloudLink
    let scheduler: Scheduler
    let uplinks: [Uplink]
    let notifyClasses: Set<String>
    let clock: C
    let now: @Sendable () -> Int64
    let logger: Logger
    let backoff: Backoff
    let state = Mutex(State())
    /// Told whenever an uplink's availability changes, for the notify loop.
    let availabilityChanged = Signal()
    /// Per-table compression dictionaries; nil unless batches are compressed with zstd and
    /// `dictionary_bytes` is above 0.
    let dictionaries: DictionaryBook?
    /// The replica's chunk store (which object uploads read and fetches fill), the receives
    /// under way (which GC keeps its hands off), and `[objects]`.
    let objects: GatewayObjects
    var chunks: any ChunkStore { objects.chunkStore }
    var objectSettings: ObjectSettings { objects.settings }
    /// Per table, its schema: which columns hold objects, whether it syncs atomically.
    let schemas: [String: TableSchema]

    /// - Parameters:
    ///   - uplinks: at least one; their classes must be in `networkClasses`, which is in cost
    ///     order (cheapest first).
    ///   - now: wall-clock milliseconds since 1970, the same the store uses.
    public init(
        store: ReplicaStore, link: CloudLink, uplinks: [UplinkConfig], networkClasses: [String], tables: [TableSchema],
        objects: GatewayObjects, clock: C,
        now: @escaping @Sendable () -> Int64, logger: Logger
    ) {
        self.store = store
        self.objects = objects
        self.schemas = Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.link = link
        self.clock = clock
        self.now = now
        self.logger = logger
        self.backoff = Backoff(minimum: link.retryMin, maximum: link.retryMax)
        let runtime = uplinks.map { config in
            Uplink(config: config, cost: networkClasses.firstIndex(of: config.networkClass) ?? networkClasses.count, link: link)
        }
        self.uplinks = runtime
        self.notifyClasses = Set(link.notifyNetworks)
        self.scheduler = Scheduler(
            tables: tables.flatMap(Self.rules), uplinks: runtime.map(\.rules), flushBytes: Int64(link.flushBytes))
        self.dictionaries = Self.dictionaryBook(store: store, link: link, logger: logger)
        store.observeCommits { [weak self] notice in self?.noticeCommit(notice) }
    }

    private static func dictionaryBook(store: ReplicaStore, link: CloudLink, logger: Logger) -> DictionaryBook? {
        guard link.compression == .zstd, link.dictionaryBytes > 0 else { return nil }
        var settings = DictionaryBook.Settings()
        settings.capacity = link.dictionaryBytes
        settings.level = link.level
        do {
            return DictionaryBook(settings: settings, kept: try store.keptDictionaries())
        } catch {
            logger.error("cannot read the kept dictionaries; training new ones", metadata: ["error": "\(error)"])
            return DictionaryBook(settings: settings, kept: [])
        }
    }

    /// A table's rules for the scheduler: its rows, and its objects as a stream of their own
    /// when it has OBJECT columns (``ObjectStream``).
    static func rules(_ schema: TableSchema) -> [TableRules] {
        let policy = schema.policy
        let rows = TableRules(
            name: schema.name, localOnly: policy.localOnly, maxDelay: policy.uploadRows.maxDelay.milliseconds,
            uploadNetworks: Set(policy.uploadRows.networks), period: policy.downloadRows.period.milliseconds,
            downloadNetworks: Set(policy.downloadRows.networks))
        guard schema.columns.contains(where: { $0.type == .object }) else { return [rows] }
        // Objects of an atomic table come down with their rows' page, and on-demand ones when
        // read: neither is fetched by the stream's period.
        let fetchedByPeriod = !policy.atomicSync && !policy.downloadObjects.onDemand
        let objects = ObjectStream.rules(
            of: schema.name, localOnly: policy.localOnly, maxDelay: policy.uploadObjects.maxDelay.milliseconds,
            uploadNetworks: Set(policy.uploadObjects.networks), period: policy.downloadObjects.period.milliseconds,
            downloadNetworks: fetchedByPeriod ? Set(policy.downloadObjects.networks) : [])
        return [rows, objects]
    }

    public var status: SyncStatus { state.withLock { $0.status } }

    /// Whether the decision loop waits with nothing to do now: no poke pending, and the time it
    /// planned to wake (if any) still ahead. Code that moves a manual clock (tests, the
    /// frugality benchmark) waits for this before moving it again, so that no wake is skipped.
    public var isQuiet: Bool {
        let now = self.now()
        return state.withLock { state in
            state.wakeup != nil && !state.poked && (state.plannedWake.map { $0 > now } ?? true)
        }
    }

    // MARK: - Requests from outside

    /// Sends `table`'s pending changes and pulls it as soon as an uplink its policy allows is
    /// usable, whatever its delay; answers when that is done, or when it cannot be done now
    /// (the changes then go at the first allowed availability).
    public func syncNow(table: String) async -> SyncOutcome {
        // A sync-now overrides waiting, the retry backoff included: every uplink the table may
        // use gets one immediate try.
        // The table's objects go too, each over the classes their own policy allows.
        let streams = [table, ObjectStream.name(of: table)].filter { scheduler.rules(of: $0) != nil }
        for rules in streams.compactMap(scheduler.rules(of:)) {
            for uplink in uplinks
            where rules.uploadNetworks.contains(uplink.config.networkClass)
                || rules.downloadNetworks.contains(uplink.config.networkClass)
            {
                uplink.endBackoff()
            }
        }
        return await withCheckedContinuation { continuation in
            let stopped = state.withLock { state in
                guard !state.stopped else { return true }
                state.urgentUploads.formUnion(streams)
                // Objects fetched on demand or with their atomic rows have no pull of their own.
                state.urgentPulls.formUnion(streams.filter { self.scheduler.rules(of: $0)?.downloadNetworks.isEmpty == false })
                state.waiters.append((table, continuation))
                return false
            }
            if stopped { continuation.resume(returning: .queued("the gateway is stopping")) } else { poke() }
        }
    }

    /// Sets an uplink's availability override, as the admin API asks.
    ///
    /// - Throws: ``DallyError`` `not_found` for an unknown uplink.
    public func setAvailability(uplink name: String, to mode: AvailabilityOverride) throws(DallyError) -> UplinkSnapshot {
        guard let uplink = uplinks.first(where: { $0.name == name }) else {
            throw DallyError(
                .notFound, "no uplink '\(name)'; configured: \(uplinks.map(\.name).joined(separator: ", "))")
        }
        if uplink.setOverride(mode) { availabilityDidChange(uplink, cause: "override \(mode.rawValue)") }
        poke()
        return snapshot(of: uplink)
    }

    public var uplinkSnapshots: [UplinkSnapshot] { uplinks.map(snapshot) }

    public var tableSchedules: [String: TableSchedule] {
        let misses = state.withLock { $0.status.deadlineMisses }
        var schedules: [String: TableSchedule] = [:]
        for table in scheduler.tables {
            schedules[table.name] = TableSchedule(
                maxDelayMs: table.maxDelay, deadlineMisses: misses[table.name] ?? 0)
        }
        return schedules
    }

    func snapshot(of uplink: Uplink) -> UplinkSnapshot {
        let availability = uplink.availability
        return UplinkSnapshot(
            name: uplink.name, networkClass: uplink.config.networkClass, url: uplink.config.url,
            override: availability.override, available: availability.isAvailable, usable: uplink.isUsable(at: now()),
            retryAt: availability.retryAt, eager: uplink.config.eager, counters: uplink.counters.all)
    }

    func availabilityDidChange(_ uplink: Uplink, cause: String) {
        let availability = uplink.availability
        logger.notice(
            "uplink availability changed",
            metadata: [
                "uplink": "\(uplink.name)", "class": "\(uplink.config.networkClass)",
                "available": "\(availability.isAvailable)", "cause": "\(cause)",
            ])
        availabilityChanged.fire()
        poke()
    }

    /// Decides whether a commit can move the plan earlier, and pokes the loop if so: a table
    /// that became dirty with a deadline before the planned wake, a table past the size bound,
    /// or changes an eager uplink may carry.
    func noticeCommit(_ notice: ReplicaStore.CommitNotice) {
        guard !notice.outbox.isEmpty else { return }
        let now = self.now()
        let eagerClasses = Set(uplinks.filter { $0.config.eager && $0.isUsable(at: now) }.map(\.config.networkClass))
        let wake = state.withLock { state -> Bool in
            var wake = !state.status.idle
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

    // MARK: - Service

    public func run() async throws {
        // Shutdown cancels every loop: a request under way is abandoned (a batch in flight
        // stays recorded and is resent at the next start), the notify poll is dropped.
        await cancelWhenGracefulShutdown {
            await withTaskCancellationHandler {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await self.decisionLoop() }
                    group.addTask { await self.notifyLoop() }
                    for uplink in self.uplinks { group.addTask { await self.probeLoop(uplink) } }
                    await group.waitForAll()
                }
            } onCancel: {
                self.stop()
            }
        }
        stop()
        for uplink in uplinks { await uplink.shutdown() }
    }

    private func stop() {
        let waiters = state.withLock { state in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: .queued("the gateway is stopping")) }
        availabilityChanged.fire()
        poke()
    }

    var stopped: Bool { state.withLock { $0.stopped } || Task.isCancelled }

    /// Sleeps `duration` on the clock; false when cancelled.
    func sleep(for duration: Duration) async -> Bool {
        await sleep(until: clock.now.advanced(by: duration))
    }

    /// Sleeps until `deadline` on the clock; false when cancelled.
    func sleep(until deadline: C.Instant) async -> Bool {
        do {
            try await clock.sleep(until: deadline, tolerance: nil)
            return true
        } catch {
            return false
        }
    }
}

/// A broadcast that can fire many times: each waiter is woken by the next firing (or its
/// task's cancellation).
final class Signal: Sendable {
    private struct State {
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    func wait() async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = state.withLock { state in
                    if Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    func fire() {
        let all = state.withLock { state in
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in all { waiter.resume() }
    }
}
