import DallyObjects
import DallyScheduler
import DallyStore
import Foundation

extension Syncer {
    /// Asks the scheduler, acts, repeats: the heart of the syncer.
    func decisionLoop() async {
        var storeFailures = 0
        while !stopped {
            let situation: Situation
            do {
                situation = try await look()
                storeFailures = 0
            } catch {
                if stopped { return }
                storeFailures += 1
                let delay = backoff.delay(afterFailures: storeFailures, unit: Double.random(in: 0..<1))
                logger.error("cannot read the outbox; retrying", metadata: ["error": "\(error)", "retry_in": "\(delay)"])
                guard await sleep(for: delay) else { return }
                continue
            }
            countMisses(scheduler.stranded(situation))
            switch scheduler.decide(situation) {
            case .wake(let wake):
                guard let uplink = uplinks.first(where: { $0.name == wake.uplink }) else { continue }
                let requests = uplink.counters.requests
                await cycle(on: uplink, reasons: wake.reasons, duePulls: scheduler.duePulls(situation))
                if uplink.counters.requests == requests {
                    // The scheduler saw work the cycle could not do (or the store failed before
                    // a request): do not spin on it.
                    logger.warning(
                        "a wake-up sent nothing; deciding again after retry_min or a change",
                        metadata: ["uplink": "\(uplink.name)", "reasons": "\(wake.reasons.map(\.rawValue).sorted())"])
                    await waitForPoke(until: now() + backoff.minimum.milliseconds)
                }
            case .sleep(let until):
                answerWaiters(situation)
                await waitForPoke(until: until)
            }
        }
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
        for uplink in uplinks {
            let availability = uplink.availability
            if availability.isUsable(at: now) {
                situation.usable.insert(uplink.name)
            } else if availability.isAvailable, let retryAt = availability.retryAt {
                situation.backingOff[uplink.name] = retryAt
            }
        }
        for summary in summaries where summary.pending > 0 {
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
        situation.inFlight = flights.map { FlightTables(uploads: $0.uploads, pulls: $0.pulls) }
        state.withLock { state in
            state.pendingBytes = Dictionary(uniqueKeysWithValues: summaries.map { ($0.table, $0.bytes) })
            // A sync-now for a table with nothing to send is served by its pull alone.
            state.urgentUploads = state.urgentUploads.filter { table in
                situation.pending[table] != nil || flights.contains { $0.uploads.contains(table) }
            }
            situation.urgentUploads = state.urgentUploads
            situation.urgentPulls = state.urgentPulls
        }
        return situation
    }

    /// Counts each table's deadline that passes with no allowed uplink usable, once.
    private func countMisses(_ stranded: [(table: String, deadline: Int64)]) {
        let fresh = state.withLock { state in
            stranded.filter { entry in
                guard state.missedDeadline[entry.table] != entry.deadline else { return false }
                state.missedDeadline[entry.table] = entry.deadline
                state.status.deadlineMisses[entry.table, default: 0] += 1
                return true
            }
        }
        for entry in fresh {
            logger.warning(
                "deadline passed with no allowed uplink available; the changes wait for one",
                metadata: ["table": "\(entry.table)", "deadline_ms": "\(entry.deadline)"])
        }
    }

    /// Answers the sync-now requests whose table has nothing left to do, or cannot be served now.
    private func answerWaiters(_ situation: Situation) {
        let (waiters, report, lastError) = state.withLock { state in
            defer {
                state.waiters.removeAll()
                state.report = SyncReport()
            }
            return (state.waiters, state.report, state.status.lastError)
        }
        for waiter in waiters {
            // A table's sync-now is served when its rows and its objects both are.
            let streams = [waiter.table, ObjectStream.name(of: waiter.table)]
            if streams.allSatisfy({ !situation.urgentUploads.contains($0) && !situation.urgentPulls.contains($0) }) {
                waiter.continuation.resume(returning: .synced(report))
            } else if !situation.backingOff.isEmpty, let lastError {
                waiter.continuation.resume(returning: .queued("the cloud could not be reached: \(lastError)"))
            } else {
                waiter.continuation.resume(
                    returning: .queued("no uplink that table '\(waiter.table)' may use is available"))
            }
        }
    }

    /// Waits for a poke, or until `time` (ms since 1970) on the clock.
    private func waitForPoke(until time: Int64?) async {
        let timer: Task<Void, Never>? = time.map { time in
            // The deadline is fixed now, not when the task first runs: time may move before
            // it does (a busy machine, or a test's clock), and the wake must not move with it.
            let deadline = clock.now.advanced(by: .milliseconds(max(0, time - now())))
            return Task { [weak self] in
                guard let self, await self.sleep(until: deadline) else { return }
                self.poke()
            }
        }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.poked || state.stopped {
                    state.poked = false
                    return true
                }
                state.wakeup = continuation
                state.plannedWake = time
                state.status.idle = true
                state.status.nextWakeAt = time
                return false
            }
            if now { continuation.resume() }
        }
        state.withLock { state in
            state.plannedWake = nil
            state.status.idle = false
        }
        timer?.cancel()
    }
}
