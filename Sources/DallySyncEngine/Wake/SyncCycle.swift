import DallyCore
import DallyConfig
import DallyObjects
import DallyScheduler
import DallyStore
import DallySync
import Foundation
import Logging
import Synchronization

/// One wake-up of one uplink: resend the batches in flight it may carry, send every pending
/// change it may carry, its objects, and pull what may come down over it.
///
/// Every table that may come down rides on the batches' answers; a pull of its own follows
/// when a table that is due did not ride (beside the object walk, when there is one), or the
/// cloud said more is waiting. Each batch is
/// persisted as in flight (``ReplicaStore/nextBatch(gateway:maxRows:scope:)``) before it leaves.
final class SyncCycle: Sendable {
    /// The most batches one cycle sends before the scheduler decides again, so that a stream
    /// of writes on an eager uplink cannot keep other uplinks' due work waiting.
    static var maxBatchesPerCycle: Int { 100 }

    /// How often (ms) a long object walk asks whether rows fell due meanwhile.
    static var rowCheckInterval: Int64 { 5_000 }

    /// How often (ms) a wake lets one change per table that the cloud refused for its schema
    /// go again (``ReplicaStore/retrySchemaRefusals(table:)``): the first wake after start,
    /// then every ten minutes.
    static var schemaProbeInterval: Int64 { 600_000 }

    /// What cycles did since start.
    struct Counters: Sendable {
        var cycles: Int64 = 0
        var batchesSent: Int64 = 0
        var batchesResent: Int64 = 0
        var pulls: Int64 = 0
        /// Batches that carried a pull asked while their wake went (no pull of its own followed).
        var pullsRiding: Int64 = 0
        /// Pulls that went beside a wake's last batches instead of after them.
        var pullsBeside: Int64 = 0
        var rows = SyncReport()
        var failures: Int64 = 0
        var consecutiveFailures = 0
        /// Milliseconds since 1970 of the last cycle that completed.
        var lastSuccessAt: Int64?
        var lastError: String?
        var traffic = CloudClient.Traffic()
        /// Per batch id in flight, the uplink it was last sent on.
        var lastUplink: [String: String] = [:]
    }

    // Not private where `SyncCycle+Batches` (the batches of a wake) uses them.
    let store: ReplicaStore
    let link: CloudLink
    private let scheduler: Scheduler
    let requests: SyncRequests
    private let uploader: ObjectUploader
    let fetcher: ObjectFetcher
    let dictionaries: DictionaryExchange
    let declarations: DeclarationCheck
    private let backoff: Backoff
    let now: @Sendable () -> Int64
    let logger: Logger
    let counters = Mutex(Counters())
    /// When a wake last probed the changes refused for the cloud's schema.
    private let schemaProbedAt = Mutex<Int64?>(nil)

    init(
        store: ReplicaStore, link: CloudLink, scheduler: Scheduler, requests: SyncRequests, uploader: ObjectUploader,
        fetcher: ObjectFetcher, dictionaries: DictionaryExchange, declarations: DeclarationCheck, backoff: Backoff,
        now: @escaping @Sendable () -> Int64, logger: Logger
    ) {
        self.store = store
        self.link = link
        self.scheduler = scheduler
        self.requests = requests
        self.uploader = uploader
        self.fetcher = fetcher
        self.dictionaries = dictionaries
        self.declarations = declarations
        self.backoff = backoff
        self.now = now
        self.logger = logger
    }

    var counts: Counters { counters.withLock { $0 } }

    /// Runs one wake of `uplink`; a failure is counted, logged and starts the uplink's backoff.
    ///
    /// - Parameters:
    ///   - duePulls: tables whose download period has passed.
    ///   - rowsCall: which uplink rows due now call for, if any (the decision loop's view), asked
    ///     between the chunks of a long object walk.
    func run(
        on uplink: Uplink, reasons: Set<DallyScheduler.WakeReason>, duePulls: Set<String>,
        rowsCall: @escaping () async throws -> String?
    ) async {
        uplink.count { $0.wakeUps += 1 }
        logger.debug(
            "waking uplink", metadata: ["uplink": "\(uplink.name)", "reasons": "\(reasons.map(\.rawValue).sorted())"])
        let scope = scheduler.scope(of: uplink.rules)
        let asked = requests.urgent
        let began = now()
        do {
            // Before the scope: what the cloud would refuse of a table whose declaration differs
            // from its own is held back (``DeclarationCheck``).
            let held = try await declarations.checkIfDue(on: uplink)
            let (heldPulls, heldUploads) = (held.pulls, held.uploads)
            let rowUploads = scope.uploads.filter { ObjectStream.table(of: $0) == nil && !heldUploads.contains($0) }
            let rows = BatchScope(
                uploads: rowUploads, pulls: scope.pulls.filter { ObjectStream.table(of: $0) == nil && !heldPulls.contains($0) },
                pullsRiding: { [scheduler, rules = uplink.rules] uploads in scheduler.pulls(riding: uploads, on: rules) })
            let objects = ObjectScope(
                uploads: Set(scope.uploads.compactMap(ObjectStream.table(of:))),
                downloads: Set(scope.pulls.compactMap(ObjectStream.table(of:))))
            let fillingBefore = try await store.fillingTables()
            let (report, walkPaused, pulledLate) = try await exchange(
                on: uplink, scope: rows, objects: objects, duePulls: duePulls, filling: fillingBefore,
                askedPulls: asked.pulls, rowsCall: rowsCall)
            // A fill ends with its pull's last page, whichever request brought it.
            let filled = fillingBefore.isEmpty ? [] : fillingBefore.subtracting(try await store.fillingTables())
            if !filled.isEmpty {
                logger.info(
                    "added columns filled from the cloud; the tables' changes go again",
                    metadata: ["tables": "\(filled.sorted().joined(separator: ","))"])
            }
            // Only what was asked before the cycle began is served by it, and the pulls asked
            // while it went that its closing pull took; a paused walk served its rows only
            // (objects and pulls come at the next wake).
            requests.served(
                uploads: asked.uploads.intersection(walkPaused ? rowUploads : scope.uploads.subtracting(heldUploads)),
                pulls: walkPaused ? [] : asked.pulls.intersection(scope.pulls.subtracting(heldPulls)).union(pulledLate),
                report: report)
            uplink.recordCycleCompleted()
            let now = self.now()
            counters.withLock { counters in
                counters.cycles += 1
                counters.consecutiveFailures = 0
                counters.lastSuccessAt = now
            }
        } catch {
            uplink.noteSilence(after: error)
            let cut = (error as? CloudError)?.cloudDidNotAnswer == true && (uplink.lastAnswerAt ?? .min) >= began
            let (failures, delay) = uplink.recordFailure(now: now(), backoff: backoff, cutAfterAnswers: cut)
            counters.withLock { counters in
                counters.failures += 1
                counters.consecutiveFailures += 1
                counters.lastError = "\(error)"
            }
            logger.warning(
                "sync failed; retrying",
                metadata: [
                    "uplink": "\(uplink.name)", "error": "\(error)", "retry_in": "\(DurationText.format(delay))", "failures": "\(failures)",
                ])
        }
    }

    /// Rows, then objects (with a pull no batch carried beside them), then pulls the answers
    /// asked for; whether an object walk was paused for rows due on
    /// another uplink (the exchange then ends there), and the pulls asked since the wake began
    /// (`askedPulls` were asked before) that its batches or its closing pull served. `filling`: the tables
    /// whose added columns are being filled as the wake began (``ColumnFill``), pulled before
    /// anything.
    private func exchange(
        on uplink: Uplink, scope: BatchScope, objects: ObjectScope, duePulls: Set<String>, filling: Set<String>,
        askedPulls: Set<String>, rowsCall: @escaping () async throws -> String?
    ) async throws -> (report: SyncReport, walkPaused: Bool, pulledLate: Set<String>) {
        var report = SyncReport()
        try await probeSchemaRefusals()
        // Due tables this wake must still bring up to date: a batch's answer does that for the
        // tables its `since` names, which may be fewer than the uplink may carry.
        var unpulled = duePulls.intersection(scope.pulls ?? [])
        // A table whose added columns are being filled holds its changes until its pull from
        // scratch ends (``ColumnFill``): pulled first, so that they go in this wake.
        let fillHere = filling.intersection(scope.pulls ?? [])
        if !fillHere.isEmpty {
            report.add(try await pull(fillHere, on: uplink))
            unpulled.subtract(fillHere)
        }
        // Rows first (small, and most urgent), then objects; rows of atomic tables that waited
        // for those objects go in a second round of batches. The first object's ask goes
        // beside the rows: on a long link its round trip then costs nothing.
        let (chunkStarted, started) = AsyncStream<Void>.makeStream()
        let ahead = objects.uploads.isEmpty
            ? nil
            : Task {
                await uploader.askAhead(
                    on: uplink, tables: objects.uploads, rowTables: scope.uploads, chunkStarted: { started.finish() })
            }
        defer { ahead?.cancel() }
        // On a long link the rows go once the first chunk's upload has begun: it takes the
        // connection the pool holds open, and their small requests the new ones.
        if ahead != nil, uplink.client.watch.model.roundTripIsLong {
            for await _ in chunkStarted {}
        }
        var more: Bool
        // Pulls asked while the wake goes: a later batch may carry them (long links only), or
        // the closing pull does.
        var late = LatePulls(askedBefore: askedPulls, allowed: scope.pulls ?? [])
        // The dictionaries' tend a batch round began beside its last batch (long links only).
        var tendingBeside: Task<Void, any Error>?
        defer { tendingBeside?.cancel() }
        do {
            more = try await sendBatches(
                on: uplink, scope: scope, report: &report, unpulled: &unpulled, late: &late, tending: &tendingBeside)
        } catch {
            // No walk takes over a first chunk sent beside the ask: it is cut.
            ahead?.cancel()
            await ahead?.value?.firstChunk?.sending.cancel()
            throw error
        }
        if !objects.uploads.isEmpty {
            // A walk can take minutes on a slow link. Rows written meanwhile whose deadline
            // comes go between chunks over this same (already awake) uplink; when they call for
            // another uplink, the walk pauses so that the scheduler can wake it, and resumes
            // (asking which chunks arrived) at the next wake that may carry objects.
            var lastRowCheck = now()
            let sendDueRows: () async throws -> Void = {
                guard self.now() - lastRowCheck >= Self.rowCheckInterval else { return }
                lastRowCheck = self.now()
                guard let called = try await rowsCall() else { return }
                guard called == uplink.name else { throw WalkPause(for: called) }
                if try await self.sendBatches(
                    on: uplink, scope: scope, report: &report, unpulled: &unpulled, late: &late, tending: &tendingBeside)
                {
                    more = true
                }
            }
            // A pull no batch carried goes beside the walk, not after it: on a long link its
            // round trip would otherwise follow the last chunk's (a wake resumed after a cut
            // sends no rows). It ends before any later batch is built, so that no two answers
            // bring the same table's pages down at once.
            let pullBeside = more || unpulled.isEmpty ? nil : Task { try await self.pull(scope.pulls ?? [], on: uplink) }
            if pullBeside != nil { unpulled = [] }
            var pulledBeside = false
            func awaitPullBeside() async throws {
                guard let pullBeside, !pulledBeside else { return }
                pulledBeside = true
                report.add(try await pullBeside.value)
            }
            let early = await ahead?.value
            let walked: ObjectUploader.Outcome
            do {
                walked = try await uploader.upload(
                    on: uplink, tables: objects.uploads, ahead: early,
                    betweenChunks: {
                        try await awaitPullBeside()
                        try await sendDueRows()
                    })
                try await awaitPullBeside()
            } catch {
                pullBeside?.cancel()
                _ = try? await pullBeside?.value
                throw error
            }
            switch walked {
            case .paused:
                return (report, true, [])
            case .finished(let finished) where finished > 0:
                _ = try await sendBatches(
                    on: uplink, scope: scope, report: &report, unpulled: &unpulled, late: &late, tending: &tendingBeside)
            case .finished:
                break
            }
        }
        // The dictionaries go beside the closing pull and downloads (the tend begun beside the
        // last batch, if any, first): each is a round trip of its own on a long link, and
        // neither waits for the other.
        let beside = tendingBeside
        async let tended: Void = { [dictionaries] in
            try await beside?.value
            try await dictionaries.tend(on: uplink, uploads: scope.uploads)
        }()
        // A pull asked while the wake went (a sync-now that came as its batches flew, a table
        // the cloud said moved) and that no later batch carried rides in its closing pull
        // instead of a wake of its own after it: one round trip fewer before a sync-now is
        // answered. Asked now, the pull that follows is one the request came before. Not on an
        // uplink an operator (or a probe) took away meanwhile: such a request is answered as
        // the decision loop finds it.
        let (waiting, carried, _) = uplink.isUsable(at: now()) ? late.waiting(in: requests) : ([], [], 0)
        let closing = more || !unpulled.isEmpty || !waiting.isEmpty
        if closing { report.add(try await pull(scope.pulls ?? [], on: uplink)) }
        if !objects.downloads.isEmpty { try await fetcher.downloadObjects(on: uplink, tables: objects.downloads) }
        try await tended
        return (report, false, closing ? waiting.union(carried) : carried)
    }

    /// Lets one change per table the cloud refused for lacking its table or a column go again,
    /// once a period: when the cloud's declaration has caught up, it is accepted and the rest
    /// follow it (``ReplicaStore/retrySchemaRefusals(table:)``).
    private func probeSchemaRefusals() async throws {
        let now = self.now()
        let due = schemaProbedAt.withLock { last in
            guard last.map({ now - $0 >= Self.schemaProbeInterval }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        let probed = try await store.retrySchemaRefusals()
        if !probed.isEmpty {
            logger.info(
                "retrying a change the cloud refused for its schema (unknown table or column)",
                metadata: ["tables": "\(probed.joined(separator: ","))"])
        }
    }

    /// Pulls `tables` with empty batches until the cloud says nothing more waits.
    func pull(_ tables: Set<String>, on uplink: Uplink) async throws -> SyncReport {
        let pulls = tables.sorted()
        var report = SyncReport()
        var more = true
        while more {
            let cursors = try await store.cloudCursors().entries.filter { pulls.contains($0.table) }
            var request = BatchRequest(
                batchID: UUID().uuidString.lowercased(), gateway: link.gatewayID, replica: store.replicaID,
                since: TableVersions(cursors), scopes: store.scopes.restricted(to: cursors.map(\.table)), sections: [])
            request.resyncing = try await store.resyncingTables().filter(pulls.contains)
            let (answer, traffic) = try await uplink.client.post(batch: request.encode(), outline: request.outline)
            uplink.recordAnswer(traffic, now: now())
            let applied = try await settle(pulled: answer.changes, of: pulls, on: uplink, traffic: traffic)
            report.add(applied)
            more = applied.more
            counters.withLock { $0.pulls += 1 }
        }
        return report
    }

    /// Applies pages that came down for `tables` (a pull's answer, or, `inline`, a notify
    /// answer that carried them), with the objects their atomic rows need, and counts them.
    func settle(
        pulled pages: [ChangePage], of tables: [String], on uplink: Uplink, traffic: CloudClient.Traffic,
        inline: Bool = false
    ) async throws -> SyncReport {
        try await fetcher.fetchAtomicObjects(of: pages, on: uplink)
        let applied = try await store.applyChanges(pages, pulled: tables, unlessResyncing: inline)
        counters.withLock { counters in
            counters.rows.add(applied)
            counters.traffic.add(traffic)
        }
        return applied
    }
}
