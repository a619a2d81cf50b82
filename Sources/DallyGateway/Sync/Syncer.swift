import AsyncHTTPClient
import DallyConfig
import DallyStore
import DallySync
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Moves changes between the replica and the cloud.
///
/// One loop runs sync cycles: send the outbox as batches (each persisted as in flight before it
/// leaves, resent unchanged until answered), apply each answer with its downstream page, and
/// pull further when the cloud says more is waiting. A cycle starts on a sync-now request, on
/// a notification, or every `sync_interval` (until the delay-tolerant scheduler replaces the
/// interval). A failed cycle is retried after a capped, jittered backoff; a sync-now cuts the
/// wait short. A second loop holds one notify long-poll at the cloud and asks for a pull when
/// a followed table changes elsewhere.
public final class Syncer<C: Clock>: Service, SyncControl where C.Duration == Duration {
    private struct State {
        /// A cycle was asked for while none was waiting to start.
        var poked = false
        var wakeup: CheckedContinuation<Void, Never>?
        /// Sync-now requests, numbered; a cycle serves every request numbered up to the count
        /// at its start.
        var requested: UInt64 = 0
        var waiters: [(number: UInt64, continuation: CheckedContinuation<SyncOutcome, Never>)] = []
        var pullRequested = false
        var stopped = false
        var status = SyncStatus()
    }

    private let store: ReplicaStore
    private let link: CloudLink
    private let clock: C
    private let logger: Logger
    private let backoff: Backoff
    private let state = Mutex(State())

    public init(store: ReplicaStore, link: CloudLink, clock: C, logger: Logger) {
        self.store = store
        self.link = link
        self.clock = clock
        self.logger = logger
        self.backoff = Backoff(minimum: link.retryMin, maximum: link.retryMax)
    }

    public var status: SyncStatus { state.withLock { $0.status } }

    /// Runs a cycle as soon as possible and returns its outcome.
    public func syncNow() async -> SyncOutcome {
        await withCheckedContinuation { continuation in
            let stopped = state.withLock { state in
                guard !state.stopped else { return true }
                state.requested += 1
                state.pullRequested = true
                state.waiters.append((state.requested, continuation))
                return false
            }
            if stopped { continuation.resume(returning: .queued("the gateway is stopping")) } else { poke() }
        }
    }

    private func poke() {
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

    public func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 4)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let cloud = CloudClient(http: http, link: link)
        // Shutdown cancels both loops: a request under way is abandoned (a batch in flight
        // stays recorded and is resent at the next start), the notify poll is dropped.
        await cancelWhenGracefulShutdown {
            await withTaskCancellationHandler {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await self.syncLoop(cloud) }
                    group.addTask { await self.notifyLoop(cloud) }
                    await group.waitForAll()
                }
            } onCancel: {
                self.stop()
            }
        }
        stop()
        try? await http.shutdown()
    }

    private func stop() {
        let waiters = state.withLock { state in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: .queued("the gateway is stopping")) }
        poke()
    }

    private var stopped: Bool { state.withLock { $0.stopped } || Task.isCancelled }

    // MARK: - Sync cycles

    private func syncLoop(_ cloud: CloudClient) async {
        var delay = Duration.zero
        while !stopped {
            await waitForPoke(upTo: delay)
            if stopped { break }
            let (served, pull) = state.withLock { state in
                defer { state.pullRequested = false }
                return (state.requested, state.pullRequested)
            }
            let outcome: SyncOutcome
            do {
                let report = try await cycle(cloud, pull: pull)
                outcome = .synced(report)
                state.withLock { state in
                    state.status.cycles += 1
                    state.status.consecutiveFailures = 0
                    state.status.lastSuccessAt = Int64(Date().timeIntervalSince1970 * 1000)
                }
                delay = .seconds(5)  // TODO scheduler: sync_interval is gone; the scheduler decides when to send
            } catch {
                let failures = state.withLock { state in
                    state.status.failures += 1
                    state.status.consecutiveFailures += 1
                    state.status.lastError = "\(error)"
                    return state.status.consecutiveFailures
                }
                delay = backoff.delay(afterFailures: failures, unit: Double.random(in: 0..<1))
                logger.warning(
                    "sync failed; retrying", metadata: ["error": "\(error)", "retry_in": "\(delay)", "failures": "\(failures)"])
                outcome = .queued("\(error)")
            }
            let waiters = state.withLock { state in
                let due = state.waiters.filter { $0.number <= served }
                state.waiters.removeAll { $0.number <= served }
                return due
            }
            for waiter in waiters { waiter.continuation.resume(returning: outcome) }
        }
    }

    /// Waits for a poke, or `delay`.
    private func waitForPoke(upTo delay: Duration) async {
        let clock = self.clock
        let timer = Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            self?.poke()
        }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.poked || state.stopped {
                    state.poked = false
                    return true
                }
                state.wakeup = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
    }

    /// Sends everything pending, then pulls what the answers left behind (or everything, when
    /// asked to).
    private func cycle(_ cloud: CloudClient, pull: Bool) async throws -> SyncReport {
        var report = SyncReport()
        var needsPull = pull
        var rowLimit = link.maxBatchRows
        while let batch = try await store.nextBatch(gateway: link.gatewayID, maxRows: rowLimit) {
            let answer: BatchAnswer
            let traffic: CloudClient.Traffic
            let result: Result<(BatchAnswer, CloudClient.Traffic), CloudError>
            do {
                result = .success(try await cloud.post(batch: batch.body))
            } catch {
                result = .failure(error)
            }
            switch result {
            case .success(let exchange):
                (answer, traffic) = exchange
            case .failure(.refused(let status, let code, _)) where status == 413 && batch.rows > 1:
                // Refused whole, before anything was applied: send the rows in smaller batches.
                try await store.abandonBatch(batchID: batch.batchID)
                rowLimit = max(1, batch.rows / 2)
                logger.warning(
                    "the cloud refused a batch as too large; splitting it",
                    metadata: ["code": "\(code)", "rows": "\(batch.rows)", "next_rows": "\(rowLimit)"])
                continue
            case .failure(let error):
                throw error
            }
            let applied = try await store.applyAnswer(answer)
            report.add(applied)
            needsPull = applied.more
            state.withLock { state in
                state.status.batchesSent += 1
                if batch.resent { state.status.batchesResent += 1 }
                state.status.record(applied)
                state.status.record(traffic)
            }
        }
        while needsPull {
            let request = BatchRequest(
                batchID: UUID().uuidString.lowercased(), gateway: link.gatewayID, replica: store.replicaID,
                since: try await store.cloudCursors(), sections: [])
            let (answer, traffic) = try await cloud.post(batch: request.encode())
            let applied = try await store.applyChanges(answer.changes)
            report.add(applied)
            needsPull = applied.more
            state.withLock { state in
                state.status.pulls += 1
                state.status.record(applied)
                state.status.record(traffic)
            }
        }
        return report
    }

    // MARK: - Notify

    private func notifyLoop(_ cloud: CloudClient) async {
        var failures = 0
        while !stopped {
            do {
                let cursors = try await store.cloudCursors()
                state.withLock { $0.status.notifyConnected = true }
                let changed = try await cloud.notify(versions: cursors, replica: store.replicaID, wait: link.notifyWait)
                failures = 0
                if !changed.isEmpty {
                    state.withLock { $0.status.notifications += 1 }
                    // Wait for the pull, so the next poll carries the new cursors.
                    _ = await syncNow()
                }
            } catch {
                state.withLock { $0.status.notifyConnected = false }
                failures += 1
                let delay = backoff.delay(afterFailures: failures, unit: Double.random(in: 0..<1))
                logger.debug("notify long-poll failed", metadata: ["error": "\(error)", "retry_in": "\(delay)"])
                do { try await clock.sleep(for: delay) } catch { return }
            }
        }
    }
}
