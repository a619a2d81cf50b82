import DallyCore
import DallyConfig
import DallyStore
import DallySync
import Logging
import Synchronization

/// Hears of changes at the cloud over the cheapest usable uplink whose class
/// `notify_networks` allows (none allowed: downloads go by their periods only): on a notify
/// stream, one request held for `notify_wait` with a line per change (PROTOCOL.md §7.3.1), or,
/// with `notify_stream = false` or on a cloud that does not stream, a long-poll per change.
///
/// A table that changed elsewhere comes back inline, as a page applied at once, when the
/// table may come down over the poll's uplink and nothing of it waits to be pulled (the
/// cloud then leaves out the pull round trip, PROTOCOL.md §7.3). Otherwise it is asked for
/// as a pull (``SyncRequests``), which the scheduler sends over that table's own download
/// networks.
final class NotifyLoop<C: Clock>: Sendable where C.Duration == Duration {
    private struct Counters {
        /// Whether the long-poll is currently held at the cloud.
        var connected = false
        var notifications: Int64 = 0
        var inlinePages: Int64 = 0
        /// False once the cloud refused `inline` (an older cloud): polls then go without it.
        var cloudTakesInline = true
        /// False once the cloud refused `stream` (an older cloud): notifications are polled.
        var cloudStreams = true
    }

    private let store: ReplicaStore
    private let link: CloudLink
    private let uplinks: [Uplink]
    private let classes: Set<String>
    private let requests: SyncRequests
    /// Per network class, the tables whose changes may come down over it inline.
    private let inlineTables: @Sendable (String) -> Set<String>
    /// The cloud's declarations, read before the first poll; tables held for a declaration
    /// that differs from the cloud's are not followed.
    private let declarations: DeclarationCheck
    /// Applies pages that came inline, as a pull's answer is applied.
    private let settle: @Sendable ([ChangePage], [String], Uplink, CloudClient.Traffic) async throws -> SyncReport
    /// Asks the decision loop for a new decision.
    private let poke: @Sendable () -> Void
    private let availabilityChanged: Signal
    private let backoff: Backoff
    private let clock: C
    private let now: @Sendable () -> Int64
    private let logger: Logger
    private let stop: StopFlag
    private let counters = Mutex(Counters())

    init(
        store: ReplicaStore, link: CloudLink, uplinks: [Uplink], requests: SyncRequests,
        inlineTables: @escaping @Sendable (String) -> Set<String>, declarations: DeclarationCheck,
        settle: @escaping @Sendable ([ChangePage], [String], Uplink, CloudClient.Traffic) async throws -> SyncReport,
        poke: @escaping @Sendable () -> Void, availabilityChanged: Signal, backoff: Backoff, clock: C,
        now: @escaping @Sendable () -> Int64, logger: Logger, stop: StopFlag
    ) {
        self.store = store
        self.link = link
        self.uplinks = uplinks
        classes = Set(link.notifyNetworks)
        self.requests = requests
        self.inlineTables = inlineTables
        self.declarations = declarations
        self.settle = settle
        self.poke = poke
        self.availabilityChanged = availabilityChanged
        self.backoff = backoff
        self.clock = clock
        self.now = now
        self.logger = logger
        self.stop = stop
    }

    var connected: Bool { counters.withLock { $0.connected } }
    var notifications: Int64 { counters.withLock { $0.notifications } }
    /// Notify answers' pages applied instead of a pull.
    var inlinePages: Int64 { counters.withLock { $0.inlinePages } }

    func run() async {
        guard !classes.isEmpty else { return }
        // Versions already notified: a table that cannot be pulled yet (its networks are
        // down) must not make every next poll return at once.
        var notified: [String: Int64] = [:]
        var failures = 0
        while !stop.isRaised {
            guard let uplink = uplinks.cheapestUsable(among: classes, at: now()) else {
                await waitForUplink()
                continue
            }
            do {
                // Before the first poll, and with it the first page that may come inline: a
                // table not pulled for its declaration is neither followed nor carried.
                let declarationHeld = try await declarations.checkIfDue(on: uplink).pulls
                var held = try await store.cloudCursors()
                held.entries.removeAll { declarationHeld.contains($0.table) }
                // Inline only where nothing is waiting to be pulled: a page from a cursor
                // behind a notified version would be applied while that pull is pending.
                // Nor while a table is resyncing: its pulls come from version 0 with its own
                // rows, and only a pull may end the resync.
                var allowed = counters.withLock { $0.cloudTakesInline } ? inlineTables(uplink.config.networkClass) : []
                if !allowed.isEmpty { allowed.subtract(try await store.resyncingTables()) }
                let inline = held.entries.filter { allowed.contains($0.table) && $0.version >= notified[$0.table] ?? 0 }
                    .map(\.table)
                var cursors = held
                cursors.entries = held.entries.map { ($0.table, max($0.version, notified[$0.table] ?? 0)) }
                counters.withLock { $0.connected = true }
                uplink.count { $0.notifyPolls += 1 }
                let scopes = store.scopes.restricted(to: cursors.entries.map(\.table))
                if link.notifyStream, counters.withLock({ $0.cloudStreams }) {
                    try await uplink.client.notifyStream(
                        versions: cursors, replica: store.replicaID, scopes: scopes, inline: inline, wait: link.notifyWait
                    ) { answer, received in
                        failures = 0
                        return try await take(answer, received: received, inline: inline, on: uplink, notified: &notified)
                    }
                } else {
                    let (answer, received) = try await uplink.client.notify(
                        versions: cursors, replica: store.replicaID, scopes: scopes, inline: inline, wait: link.notifyWait)
                    failures = 0
                    _ = try await take(answer, received: received, inline: inline, on: uplink, notified: &notified)
                }
            } catch CloudError.refused(400, .badQuery?, let message) where message.contains("'stream'") {
                // A cloud from before notify streams: poll it.
                logger.notice("the cloud does not stream notifications; polling instead")
                counters.withLock { $0.cloudStreams = false }
            } catch CloudError.refused(400, .badQuery?, let message) where message.contains("'inline'") {
                // An older cloud: poll as it expects, and pull every change.
                logger.notice("the cloud does not send changes with notifications; pulling them instead")
                counters.withLock { $0.cloudTakesInline = false }
            } catch {
                counters.withLock { $0.connected = false }
                // A cloud that went down while nothing was sent is heard of here first.
                uplink.noteSilence(after: error)
                failures += 1
                let delay = backoff.delay(afterFailures: failures, unit: Double.random(in: 0..<1))
                logger.debug(
                    "notify request failed",
                    metadata: ["uplink": "\(uplink.name)", "error": "\(error)", "retry_in": "\(DurationText.format(delay))"])
                // The probe finding the cloud back (or an override) ends the wait early.
                await waitForAvailabilityChange(until: clock.now.advanced(by: delay))
                if Task.isCancelled { return }
            }
        }
    }

    /// Takes one notification: applies the pages that came inline and continue the replica's
    /// cursors, and asks for a pull of every other table it names.
    ///
    /// A page that does not continue the cursor (it moved back since the request left: a
    /// scope change, a resync begun) is not applied: its table is pulled, and a stream is
    /// reopened from the cursors as they are now.
    private func take(
        _ answer: NotifyAnswer, received: Int, inline: [String], on uplink: Uplink, notified: inout [String: Int64]
    ) async throws -> CloudClient.StreamVerdict {
        uplink.recordAnswer(CloudClient.Traffic(received: received), now: now())
        guard !answer.versions.isEmpty else { return .goOn }
        counters.withLock { $0.notifications += 1 }
        var verdict = CloudClient.StreamVerdict.goOn
        var applied: [ChangePage] = []
        let came = answer.changes.filter { inline.contains($0.table) }
        if !came.isEmpty {
            let held = Dictionary(uniqueKeysWithValues: try await store.cloudCursors().entries.map { ($0.table, $0.version) })
            let resyncing = Set(try await store.resyncingTables())
            for page in came {
                if resyncing.contains(page.table) || page.since > held[page.table] ?? 0 {
                    verdict = .reopen
                } else {
                    applied.append(page)
                }
            }
        }
        if !applied.isEmpty {
            _ = try await settle(applied, applied.map(\.table), uplink, CloudClient.Traffic(received: received))
            counters.withLock { $0.inlinePages += Int64(applied.count) }
        }
        // A table that came inline moved its cursor: the next poll goes on from there.
        let toPull = answer.versions.entries.filter { entry in !applied.contains { $0.table == entry.table } }
        guard !toPull.isEmpty else { return verdict }
        for entry in toPull { notified[entry.table] = max(notified[entry.table] ?? 0, entry.version) }
        requests.pull(toPull.map(\.table))
        poke()
        return verdict
    }

    /// Waits until availability changes, or until the first backoff among the notify uplinks
    /// ends.
    private func waitForUplink() async {
        counters.withLock { $0.connected = false }
        let now = self.now()
        let retry = uplinks.filter { classes.contains($0.config.networkClass) }
            .compactMap { uplink -> Int64? in
                let availability = uplink.availability
                return availability.isAvailable ? availability.retryAt : nil
            }.min()
        await waitForAvailabilityChange(until: retry.map { clock.now.advanced(by: .milliseconds(max(0, $0 - now))) })
    }

    /// Waits until an uplink's availability changes or `deadline` passes (nil: no deadline).
    private func waitForAvailabilityChange(until deadline: C.Instant?) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.availabilityChanged.wait() }
            if let deadline { group.addTask { [clock] in _ = await clock.pause(until: deadline) } }
            await group.next()
            group.cancelAll()
        }
    }
}
