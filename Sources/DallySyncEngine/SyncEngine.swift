import DallyConfig
import DallyCore
import DallyObjects
import DallyScheduler
import DallyStore
import Logging
import ServiceLifecycle
import Synchronization

/// Moves changes between the gateway's replica and the cloud, when the ``Scheduler`` says
/// and over the uplinks it picks: the gateway's sync engine, wired from its parts.
///
/// - ``DecisionLoop`` asks the scheduler and sleeps on the injected clock until the next
///   deadline or a change; it runs a ``SyncCycle`` on the uplink to wake.
/// - ``SyncCycle`` sends batches, has the ``ObjectUploader`` walk queued objects, pulls, has
///   the ``ObjectFetcher`` bring objects down, and lets the ``DictionaryExchange`` tend the
///   compression dictionaries.
/// - ``NotifyLoop`` holds a long-poll at the cloud; one ``ProbeLoop`` per uplink probes it.
/// - ``SyncRequests`` holds the sync-now requests (and notified pulls) until served.
///
/// Each part keeps its own state and counters; ``status`` gathers them. Times that must
/// outlive the process (first-dirty times, pulls) are wall-clock milliseconds from `now`; the
/// clock only sleeps. Tests inject both, so they move time by hand:
///
/// ```swift
/// let engine = try SyncEngine(
///     store: store, link: link, uplinks: config.uplinks, networkClasses: config.networkClasses,
///     tables: config.tables, chunks: chunkStore, intakes: intakes, fetchTimeout: .seconds(30),
///     clock: manualClock, now: { manualClock.millis }, logger: logger)
/// // run it as a Service; engine.isQuiet says when the clock may move again.
/// ```
public final class SyncEngine<C: Clock>: Service, SyncControl, ObjectFetching where C.Duration == Duration {
    private let scheduler: Scheduler
    private let uplinks: [Uplink]
    private let requests: SyncRequests
    private let stop: StopFlag
    /// Told whenever an uplink's availability changes, for the notify loop.
    private let availabilityChanged: Signal
    /// Logs an uplink's availability change, tells the notify loop and pokes the decisions.
    private let announce: @Sendable (Uplink, _ cause: String) -> Void
    private let decisions: DecisionLoop<C>
    private let cycle: SyncCycle
    private let uploader: ObjectUploader
    private let fetcher: ObjectFetcher
    private let dictionaries: DictionaryExchange
    private let notify: NotifyLoop<C>
    private let probes: [ProbeLoop<C>]
    private let now: @Sendable () -> Int64
    private let logger: Logger
    private let store: ReplicaStore
    private let cloudClock: CloudClockOffset
    private let declarations: DeclarationCheck

    /// - Parameters:
    ///   - uplinks: at least one; their classes must be in `networkClasses`, which is in cost
    ///     order (cheapest first).
    ///   - chunks: the replica's chunk store, which uploads read and fetches fill.
    ///   - intakes: the receives under way, which GC keeps its hands off (fetches are some).
    ///   - fetchTimeout: how long a client's read waits for an object fetched on demand.
    ///   - now: wall-clock milliseconds since 1970, the same the store uses.
    /// - Throws: when `[cloud]`'s `ca`, `client_cert` or `client_key` cannot be read or parsed.
    public init(
        store: ReplicaStore, link: CloudLink, uplinks: [UplinkConfig], networkClasses: [String], tables: [TableSchema],
        chunks: any ChunkStore, intakes: ObjectIntakes, fetchTimeout: Duration, clock: C,
        now: @escaping @Sendable () -> Int64, logger: Logger
    ) throws {
        self.now = now
        self.logger = logger
        self.store = store
        if link.insecureSkipVerify {
            logger.warning("[cloud] insecure_skip_verify is on: any certificate is accepted as the cloud's")
        }
        let backoff = Backoff(minimum: link.retryMin, maximum: link.retryMax)
        let tls = try Uplink.tls(for: link)
        let timer = TransferTimer(clock: clock)
        let cloudClock = CloudClockOffset(now: now, logger: logger)
        self.cloudClock = cloudClock
        let uplinks = uplinks.map { config in
            Uplink(
                config: config, cost: networkClasses.firstIndex(of: config.networkClass) ?? networkClasses.count,
                link: link, tls: tls, timer: timer, clock: cloudClock, logger: logger)
        }
        self.uplinks = uplinks
        let scheduler = Scheduler(
            tables: tables.flatMap(\.schedulerRules), uplinks: uplinks.map(\.rules),
            flushBytes: Int64(link.flushBytes))
        self.scheduler = scheduler
        let (requests, stop, availabilityChanged) = (SyncRequests(), StopFlag(), Signal())
        (self.requests, self.stop, self.availabilityChanged) = (requests, stop, availabilityChanged)
        uploader = ObjectUploader(store: store, chunks: chunks, now: now, logger: logger, stop: stop)
        fetcher = ObjectFetcher(
            store: store, chunks: chunks, intakes: intakes,
            schemas: Dictionary(tables.map { ($0.name, $0) }) { first, _ in first }, uplinks: uplinks,
            fetchTimeout: fetchTimeout, sleep: { try? await clock.sleep(for: $0) }, now: now, stop: stop,
            logger: logger)
        dictionaries = DictionaryExchange(store: store, link: link, now: now, logger: logger)
        let declarations = DeclarationCheck(schemas: tables, now: now, logger: logger)
        self.declarations = declarations
        cycle = SyncCycle(
            store: store, link: link, scheduler: scheduler, requests: requests, uploader: uploader, fetcher: fetcher,
            dictionaries: dictionaries, declarations: declarations, backoff: backoff, now: now, logger: logger)
        let decisions = DecisionLoop(
            store: store, scheduler: scheduler, uplinks: uplinks, requests: requests, cycle: cycle,
            declarations: declarations, backoff: backoff, clock: clock, now: now, logger: logger, stop: stop)
        self.decisions = decisions
        let announce: @Sendable (Uplink, String) -> Void = { uplink, cause in
            let availability = uplink.availability
            logger.notice(
                "uplink availability changed",
                metadata: [
                    "uplink": "\(uplink.name)", "class": "\(uplink.config.networkClass)",
                    "available": "\(availability.isAvailable)", "cause": "\(cause)",
                ])
            availabilityChanged.fire()
            decisions.poke()
        }
        self.announce = announce
        let rowTables = tables.map(\.name)
        notify = NotifyLoop(
            store: store, link: link, uplinks: uplinks, requests: requests,
            inlineTables: { [scheduler] networkClass in
                Set(rowTables.filter { scheduler.rules(of: $0)?.downloadNetworks.contains(networkClass) == true })
            },
            declarations: declarations,
            settle: { [cycle] pages, tables, uplink, traffic in
                try await cycle.settle(pulled: pages, of: tables, on: uplink, traffic: traffic, inline: true)
            },
            poke: { decisions.poke() },
            availabilityChanged: availabilityChanged, backoff: backoff, clock: clock, now: now, logger: logger, stop: stop)
        probes = uplinks.map { uplink in
            ProbeLoop(
                uplink: uplink, requestTimeout: link.requestTimeout, clock: clock, now: now, stop: stop,
                availabilityChanged: announce, poke: { decisions.poke() })
        }
        let warned = Mutex<Set<String>>([])
        store.observeCommits { [weak decisions, logger] notice in
            decisions?.noticeCommit(notice)
            // The cloud's declaration may have changed since it was read: asked again before
            // a local write to such a row can send the value kept here over the cloud's.
            if !notice.notHeld.isEmpty { declarations.suspect() }
            for (table, columns) in notice.notHeld {
                for column in columns where warned.withLock({ $0.insert("\(table).\(column)").inserted }) {
                    logger.error(
                        "the cloud sent a value this column's type cannot hold: the table's configuration here and the cloud's disagree; the value is left as it was (the cloud's declarations are read again, and the table held if they differ); make the column's type the same on both",
                        metadata: ["table": "\(table)", "column": "\(column)"])
                }
            }
        }
    }

    // MARK: - SyncControl

    public var status: SyncStatus {
        let cycle = cycle.counts
        let schedule = decisions.schedule
        var status = SyncStatus()
        status.cycles = cycle.cycles
        status.batchesSent = cycle.batchesSent
        status.batchesResent = cycle.batchesResent
        status.pulls = cycle.pulls
        status.pullsRiding = cycle.pullsRiding
        status.pullsBeside = cycle.pullsBeside
        status.rowsSent = Int64(cycle.rows.sent)
        status.rowsAccepted = Int64(cycle.rows.accepted)
        status.conflicts = Int64(cycle.rows.conflicts)
        status.rejected = Int64(cycle.rows.rejected)
        status.rowsReceived = Int64(cycle.rows.received)
        status.failures = cycle.failures
        status.consecutiveFailures = cycle.consecutiveFailures
        status.lastSuccessAt = cycle.lastSuccessAt
        status.lastError = cycle.lastError
        let (uploads, fetches) = (uploader.counts, fetcher.counts)
        var traffic = cycle.traffic
        traffic.add(uploads.traffic)
        traffic.add(fetches.traffic)
        status.bytesSentRaw = Int64(traffic.sentRaw)
        status.bytesSentCompressed = Int64(traffic.sentCompressed)
        status.bytesReceived = Int64(traffic.received)
        status.notifyConnected = notify.connected
        status.notifications = notify.notifications
        status.inlinePages = notify.inlinePages
        status.dictionariesUploaded = dictionaries.uploaded
        status.objects = ObjectTransferCounters(uploads: uploads, fetches: fetches)
        status.deadlineMisses = schedule.deadlineMisses
        status.cloudClockOffsetMs = cloudClock.milliseconds
        status.declarationDifferences = declarations.differences
        status.cloudVersion = declarations.cloudVersion
        status.idle = schedule.idle
        status.nextWakeAt = schedule.nextWakeAt
        status.decisions = schedule.decisions
        status.requestsWaiting = requests.waiting
        return status
    }

    /// Whether the decision loop waits with nothing to do now: no poke pending, and the time it
    /// planned to wake (if any) still ahead. Code that moves a manual clock (tests, the
    /// frugality benchmark) waits for this before moving it again, so that no wake is skipped.
    public var isQuiet: Bool { decisions.isQuiet }

    /// Sends `table`'s pending changes and pulls it as soon as an uplink its policy allows is
    /// usable, whatever its delay; answers when that is done, or when it cannot be done now
    /// (the changes then go at the first allowed availability).
    public func syncNow(table: String) async -> SyncOutcome {
        // Changes of the table the cloud refused for its schema go again: a sync-now is how an
        // operator says the cloud's declaration has caught up.
        do {
            try await store.retrySchemaRefusals(table: table)
        } catch {
            logger.warning("could not retry changes refused for the cloud's schema", metadata: ["table": "\(table)", "error": "\(error)"])
        }
        // The table's objects go too, each over the classes their own policy allows.
        let streams = [table, ObjectStream.name(of: table)].compactMap(scheduler.rules(of:))
        // A sync-now overrides waiting, the retry backoff included: every uplink the table may
        // use gets one immediate try.
        let allowed = uplinks.filter { uplink in
            streams.contains { rules in
                rules.uploadNetworks.contains(uplink.config.networkClass)
                    || rules.downloadNetworks.contains(uplink.config.networkClass)
            }
        }
        // Nor does it wait for the next probe of an uplink its probe found down: the cloud may
        // be back (a test run under load asked a moment before the 100 ms probe found it, and
        // was told no uplink was available; on a metered class the next probe is minutes away).
        let down = probes.filter { probe in probe.isDownByProbe && allowed.contains { $0 === probe.uplink } }
        await withTaskGroup(of: Void.self) { group in
            for probe in down { group.addTask { await probe.probeNow() } }
        }
        // A sync-now is also how an operator who made a table's declaration agree with the
        // cloud's gets it back at once: the wake asks the cloud again.
        declarations.askAgain()
        // Objects fetched on demand or with their atomic rows have no pull of their own.
        let outcome = await requests.ask(
            table: table, uploads: Set(streams.map(\.name)),
            pulls: Set(streams.filter { !$0.downloadNetworks.isEmpty }.map(\.name)),
            retrying: Set(allowed.map(\.name)), asked: decisions.poke)
        if let difference = declarations.differences[table] {
            return .queued("table '\(table)' differs from the cloud's, its \(difference.held.joined(separator: " and ")) held: \(difference.message)")
        }
        return outcome
    }

    /// Sets an uplink's availability override, as the admin API asks.
    ///
    /// - Throws: ``DallyError`` `not_found` for an unknown uplink.
    public func setAvailability(uplink name: String, to mode: AvailabilityOverride) throws(DallyError) -> UplinkSnapshot {
        guard let uplink = uplinks.first(where: { $0.name == name }) else {
            throw DallyError(
                .notFound, "no uplink '\(name)'; configured: \(uplinks.map(\.name).joined(separator: ", "))")
        }
        if uplink.setOverride(mode, now: now()) { announce(uplink, "override \(mode.rawValue)") }
        decisions.poke()
        return uplink.snapshot(at: now())
    }

    public var uplinkSnapshots: [UplinkSnapshot] {
        let now = self.now()
        return uplinks.map { $0.snapshot(at: now) }
    }

    public var tableSchedules: [String: TableSchedule] {
        let misses = decisions.schedule.deadlineMisses
        var schedules: [String: TableSchedule] = [:]
        for table in scheduler.tables {
            schedules[table.name] = TableSchedule(maxDelayMs: table.maxDelay, deadlineMisses: misses[table.name] ?? 0)
        }
        return schedules
    }

    // MARK: - ObjectFetching

    /// Fetches an object a client is reading (``ObjectFetcher/fetchOnDemand(_:table:)``).
    public func fetch(_ reference: ObjectReference, table: String) async throws(DallyError) {
        try await fetcher.fetchOnDemand(reference, table: table)
    }

    // MARK: - Service

    public func run() async throws {
        // Before anything is pulled: a scope changed in the config drops what left it and
        // pulls its table again from the start (docs/CONFIG.md, scopes).
        let changed = try await store.reconcileScopes()
        if !changed.isEmpty { logger.info("scopes changed", metadata: ["tables": "\(changed.joined(separator: ","))"]) }
        let filling = try await store.fillingTables()
        if !filling.isEmpty {
            logger.info(
                "columns were added: the tables are pulled again to fill them from the cloud; their changes wait until then",
                metadata: ["tables": "\(filling.sorted().joined(separator: ","))"])
        }
        // Shutdown cancels every loop: a request under way is abandoned (a batch in flight
        // stays recorded and is resent at the next start), the notify poll is dropped.
        await cancelWhenGracefulShutdown {
            await withTaskCancellationHandler {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await self.decisions.run() }
                    group.addTask { await self.notify.run() }
                    for probe in self.probes { group.addTask { await probe.run() } }
                    await group.waitForAll()
                }
            } onCancel: {
                self.halt()
            }
        }
        halt()
        for uplink in uplinks { await uplink.shutdown() }
    }

    private func halt() {
        stop.raise()
        requests.stop()
        availabilityChanged.fire()
        decisions.poke()
    }
}
