import DallyObjects
import DallyScheduler
import DallyStore
import DallySync
import Foundation

extension Syncer {
    /// The most batches one cycle sends before the scheduler decides again, so that a stream
    /// of writes on an eager uplink cannot keep other uplinks' due work waiting.
    static var maxBatchesPerCycle: Int { 100 }

    /// How often (ms of the clock) a long object walk asks whether rows fell due meanwhile.
    static var rowCheckInterval: Int64 { 5_000 }

    /// One wake-up of `uplink`: resend the batches in flight it may carry, send every pending
    /// change it may carry, and pull what may come down over it: every such table rides on
    /// the batches' answers, and a pull of its own follows when a table that is due
    /// (`duePulls`) did not ride, or the cloud said more is waiting.
    func cycle(on uplink: Uplink, reasons: Set<DallyScheduler.WakeReason>, duePulls: Set<String>) async {
        uplink.count { $0.wakeUps += 1 }
        logger.debug(
            "waking uplink", metadata: ["uplink": "\(uplink.name)", "reasons": "\(reasons.map(\.rawValue).sorted())"])
        let scope = scheduler.scope(of: uplink.rules)
        let (urgentUploads, urgentPulls) = state.withLock { ($0.urgentUploads, $0.urgentPulls) }
        let result: Result<(report: SyncReport, walkPaused: Bool), any Error>
        do {
            let (scheduler, rules) = (self.scheduler, uplink.rules)
            let rows = (uploads: scope.uploads.filter { ObjectStream.table(of: $0) == nil },
                        pulls: scope.pulls.filter { ObjectStream.table(of: $0) == nil })
            let batchScope = BatchScope(
                uploads: rows.uploads, pulls: rows.pulls,
                pullsRiding: { uploads in scheduler.pulls(riding: uploads, on: rules) })
            let objects = ObjectScope(
                uploads: Set(scope.uploads.compactMap(ObjectStream.table(of:))),
                downloads: Set(scope.pulls.compactMap(ObjectStream.table(of:))))
            result = .success(
                try await exchange(on: uplink, scope: batchScope, objects: objects, duePulls: duePulls))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let (report, walkPaused)):
            state.withLock { state in
                // Only what was asked before the cycle began is served by it; a paused walk
                // served its rows only (objects and pulls come at the next wake).
                let served = walkPaused ? scope.uploads.filter { ObjectStream.table(of: $0) == nil } : scope.uploads
                state.urgentUploads.subtract(urgentUploads.intersection(served))
                if !walkPaused { state.urgentPulls.subtract(urgentPulls.intersection(scope.pulls)) }
                state.report.add(report)
                state.status.cycles += 1
                state.status.consecutiveFailures = 0
                state.status.lastSuccessAt = now()
            }
        case .failure(let error):
            let (failures, delay) = uplink.recordFailure(now: now(), backoff: backoff)
            state.withLock { state in
                state.status.failures += 1
                state.status.consecutiveFailures += 1
                state.status.lastError = "\(error)"
            }
            logger.warning(
                "sync failed; retrying",
                metadata: [
                    "uplink": "\(uplink.name)", "error": "\(error)", "retry_in": "\(delay)", "failures": "\(failures)",
                ])
        }
    }

    /// Rows, then objects, then pulls; whether an object walk was paused for rows due on
    /// another uplink (the exchange then ends there).
    private func exchange(on uplink: Uplink, scope: BatchScope, objects: ObjectScope, duePulls: Set<String>) async throws
        -> (report: SyncReport, walkPaused: Bool)
    {
        var report = SyncReport()
        // Due tables this wake must still bring up to date: a batch's answer does that for the
        // tables its `since` names, which may be fewer than the uplink may carry.
        var unpulled = duePulls.intersection(scope.pulls ?? [])
        // Rows first (small, and most urgent), then objects; rows of atomic tables that waited
        // for those objects go in a second round of batches.
        var more = try await sendBatches(on: uplink, scope: scope, report: &report, unpulled: &unpulled)
        if !objects.uploads.isEmpty {
            // A walk can take minutes on a slow link. Rows written meanwhile whose deadline
            // comes go between chunks over this same (already awake) uplink; when they call for
            // another uplink, the walk pauses so that the scheduler can wake it, and resumes
            // (asking which chunks arrived) at the next wake that may carry objects.
            var lastRowCheck = now()
            let sendDueRows: () async throws -> Void = {
                guard self.now() - lastRowCheck >= Self.rowCheckInterval else { return }
                lastRowCheck = self.now()
                guard let called = try await self.rowsCall() else { return }
                guard called == uplink.name else { throw WalkPause(for: called) }
                if try await self.sendBatches(on: uplink, scope: scope, report: &report, unpulled: &unpulled) {
                    more = true
                }
            }
            let finished: Int
            do {
                finished = try await uploadObjects(on: uplink, tables: objects.uploads, betweenChunks: sendDueRows)
            } catch let pause as WalkPause {
                state.withLock { $0.status.objects.walksPaused += 1 }
                logger.info(
                    "pausing an object upload: rows are due on another uplink",
                    metadata: ["uplink": "\(uplink.name)", "rows_call_for": "\(pause.uplink)"])
                return (report, true)
            }
            if finished > 0 {
                _ = try await sendBatches(on: uplink, scope: scope, report: &report, unpulled: &unpulled)
            }
        }
        var needsPull = more || !unpulled.isEmpty
        while needsPull {
            let pulls = (scope.pulls ?? []).sorted()
            let cursors = try await store.cloudCursors().entries.filter { pulls.contains($0.table) }
            let request = BatchRequest(
                batchID: UUID().uuidString.lowercased(), gateway: link.gatewayID, replica: store.replicaID,
                since: TableVersions(cursors), sections: [])
            let (answer, traffic) = try await uplink.client.post(batch: request.encode())
            uplink.recordAnswer(traffic, now: now())
            try await fetchAtomicObjects(of: answer.changes, on: uplink)
            let applied = try await store.applyChanges(answer.changes, pulled: pulls)
            report.add(applied)
            needsPull = applied.more
            state.withLock { state in
                state.status.pulls += 1
                state.status.record(applied)
                state.status.record(traffic)
            }
        }
        if !objects.downloads.isEmpty { try await downloadObjects(on: uplink, tables: objects.downloads) }
        try await tendDictionaries(on: uplink, uploads: scope.uploads)
        return (report, false)
    }

    /// Sends the batches `scope` allows, in flight ones first; whether the cloud said more
    /// changes wait downstream.
    private func sendBatches(
        on uplink: Uplink, scope: BatchScope, report: inout SyncReport, unpulled: inout Set<String>
    ) async throws -> Bool {
        var more = false
        var rowLimit = link.maxBatchRows
        var batches = 0
        while batches < Self.maxBatchesPerCycle,
            let batch = try await store.nextBatch(gateway: link.gatewayID, maxRows: rowLimit, scope: scope)
        {
            batches += 1
            noteAttempt(batch, on: uplink)
            let result: Result<(BatchAnswer, CloudClient.Traffic), CloudError>
            do {
                result = .success(try await uplink.client.post(batch: batch.body, dictionaries: dictionaries))
            } catch {
                result = .failure(error)
            }
            let answer: BatchAnswer
            let traffic: CloudClient.Traffic
            switch result {
            case .success(let exchange):
                (answer, traffic) = exchange
            case .failure(.refused(let status, let code, _)) where status == 413 && batch.rows > 1:
                // Refused whole, before anything was applied: send the rows in smaller batches.
                uplink.recordAnswer(CloudClient.Traffic(), now: now())
                try await store.abandonBatch(batchID: batch.batchID)
                state.withLock { _ = $0.lastUplink.removeValue(forKey: batch.batchID) }
                rowLimit = max(1, batch.rows / 2)
                logger.warning(
                    "the cloud refused a batch as too large; splitting it",
                    metadata: ["code": "\(code?.rawValue ?? "unknown")", "rows": "\(batch.rows)", "next_rows": "\(rowLimit)"])
                continue
            case .failure(.refused(_, .unknownDictionary, let message)) where dictionaries != nil:
                // The cloud lost a dictionary (its store was replaced?): nothing was applied,
                // so the same batch goes again at once, compressed without the dictionaries.
                uplink.recordAnswer(CloudClient.Traffic(), now: now())
                try await forgetDictionaries(usedBy: batch.body, reason: message)
                continue
            case .failure(let error):
                throw error
            }
            uplink.recordAnswer(traffic, now: now())
            try await fetchAtomicObjects(of: answer.changes, on: uplink)
            let applied = try await store.applyAnswer(answer)
            report.add(applied)
            unpulled.subtract(batch.pulls)
            more = applied.more
            state.withLock { state in
                state.lastUplink[batch.batchID] = nil
                state.status.batchesSent += 1
                if batch.resent { state.status.batchesResent += 1 }
                state.status.record(applied)
                state.status.record(traffic)
            }
        }
        return more
    }

    /// Counts a resend as a retry on the same uplink, or as a re-route from another.
    private func noteAttempt(_ batch: OutgoingBatch, on uplink: Uplink) {
        let previous = state.withLock { state in
            defer { state.lastUplink[batch.batchID] = uplink.name }
            return state.lastUplink[batch.batchID]
        }
        guard batch.resent else { return }
        if let previous, previous != uplink.name {
            uplink.count { $0.rerouted += 1 }
            logger.info(
                "resending a batch in flight over another uplink",
                metadata: ["batch": "\(batch.batchID)", "from": "\(previous)", "to": "\(uplink.name)"])
        } else {
            uplink.count { $0.retries += 1 }
        }
    }
}

/// The tables whose objects a wake may carry up, and whose queued objects it may fetch.
struct ObjectScope {
    let uploads: Set<String>
    let downloads: Set<String>
}

/// Stops an object walk between chunks because rows are due on another uplink.
struct WalkPause: Error {
    let uplink: String

    init(for uplink: String) { self.uplink = uplink }
}
