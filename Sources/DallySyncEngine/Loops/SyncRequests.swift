import DallyScheduler
import DallyStore
import Synchronization

/// The sync-now requests not served yet: the streams (tables, and their objects) that must go
/// up or come down at the first usable uplink their policy allows, whatever their delay, and
/// the callers waiting for the outcome.
///
/// The notify loop adds pulls here too: a table that changed in the cloud is pulled as if
/// asked for. A cycle marks what it served; the decision loop answers the callers when it
/// next finds nothing to do, each only once the loop has looked since it asked
/// (``prune(keepingUploads:)``): a decision made before a request came does not answer it.
final class SyncRequests: Sendable {
    private struct Waiter {
        let table: String
        /// In the order asked.
        let number: Int
        let continuation: CheckedContinuation<SyncOutcome, Never>
    }

    private struct State {
        var uploads: Set<String> = []
        var pulls: Set<String> = []
        var waiters: [Waiter] = []
        var asked = 0
        /// Moves at every request and every pull the notify loop marks (``generation``).
        var generation = 0
        /// Waiters numbered below this were asked before the decision loop last looked.
        var seen = 0
        /// Uplinks a sync-now asked to try at once, whatever their retry backoff.
        var retries: Set<String> = []
        /// What cycles did since the waiters were last answered.
        var report = SyncReport()
        var stopped = false
    }

    private let state = Mutex(State())

    /// Asks for `uploads` to go up and `pulls` to come down now, on behalf of `table`, with one
    /// immediate try on each uplink of `retrying` whatever its backoff; calls `asked` once the
    /// request is recorded (to wake the decision loop), and returns when it is answered.
    func ask(
        table: String, uploads: Set<String>, pulls: Set<String>, retrying: Set<String> = [], asked: () -> Void
    ) async -> SyncOutcome {
        await withCheckedContinuation { continuation in
            let stopped = state.withLock { state in
                guard !state.stopped else { return true }
                state.uploads.formUnion(uploads)
                state.pulls.formUnion(pulls)
                state.retries.formUnion(retrying)
                state.waiters.append(Waiter(table: table, number: state.asked, continuation: continuation))
                state.asked += 1
                state.generation += 1
                return false
            }
            if stopped { continuation.resume(returning: .queued("the gateway is stopping")) } else { asked() }
        }
    }

    /// The uplinks whose backoff sync-now requests asked to end, forgotten once told.
    ///
    /// The decision loop ends them when it next looks, not the request itself: a cycle under
    /// way when the request came (the cloud refused it a moment before it came back) would
    /// start the backoff again as it failed, and the request would be answered `queued` with
    /// no try made after it.
    func takeRetries() -> Set<String> {
        state.withLock { state in
            defer { state.retries.removeAll() }
            return state.retries
        }
    }

    /// Sync-now requests waiting for their answer.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Marks tables the cloud said changed for a pull.
    func pull(_ tables: some Sequence<String>) {
        state.withLock { state in
            state.pulls.formUnion(tables)
            state.generation += 1
        }
    }

    /// The pulls asked for now, and a count that moves whenever something is asked (a
    /// sync-now, a pull the notify loop marks): a pull whose cursors were read when the count
    /// read the same came after every request made so far (``LatePulls``).
    var pullsAsked: (pulls: Set<String>, generation: Int) {
        state.withLock { ($0.pulls, $0.generation) }
    }

    /// What is asked for now.
    var urgent: (uploads: Set<String>, pulls: Set<String>) {
        state.withLock { ($0.uploads, $0.pulls) }
    }

    /// Drops the uploads asked for that have nothing left to send (a sync-now of a table with
    /// nothing pending is served by its pull alone); what is asked for after that, which the
    /// decision loop decides from: every request made so far is in it.
    func prune(keepingUploads keep: (String) -> Bool) -> (uploads: Set<String>, pulls: Set<String>) {
        state.withLock { state in
            state.seen = state.asked
            state.uploads = state.uploads.filter(keep)
            return (state.uploads, state.pulls)
        }
    }

    /// Forgets the `uploads` and `pulls` asked for that no cycle can serve now (held).
    func drop(uploads: Set<String>, pulls: Set<String>) {
        guard !uploads.isEmpty || !pulls.isEmpty else { return }
        state.withLock { state in
            state.uploads.subtract(uploads)
            state.pulls.subtract(pulls)
        }
    }

    /// Records what a cycle served and what it did.
    func served(uploads: Set<String>, pulls: Set<String>, report: SyncReport) {
        state.withLock { state in
            state.uploads.subtract(uploads)
            state.pulls.subtract(pulls)
            state.report.add(report)
        }
    }

    /// Answers every waiter the decision loop saw when it last looked, once it has nothing to do
    /// now: served when its table's rows and objects are no longer asked for; otherwise queued,
    /// with why. A request made since waits for the next decision (its ask pokes the loop):
    /// answered from a situation read before it, it would be told `synced` with nothing done,
    /// or `queued` by a failure that came before it (seen once in a CI run, a sync-now just
    /// after the cloud came back).
    ///
    /// - Parameters:
    ///   - backingOff: whether an uplink waits out a retry backoff (the cloud failed).
    ///   - lastError: the last cycle's failure.
    func answer(asked: (uploads: Set<String>, pulls: Set<String>), backingOff: Bool, lastError: String?) {
        let (waiters, report) = state.withLock { state in
            let seen = state.seen
            defer {
                state.waiters.removeAll { $0.number < seen }
                state.report = SyncReport()
            }
            return (state.waiters.filter { $0.number < seen }, state.report)
        }
        for waiter in waiters {
            let streams = [waiter.table, ObjectStream.name(of: waiter.table)]
            if streams.allSatisfy({ !asked.uploads.contains($0) && !asked.pulls.contains($0) }) {
                waiter.continuation.resume(returning: .synced(report))
            } else if backingOff, let lastError {
                waiter.continuation.resume(returning: .queued("the cloud could not be reached: \(lastError)"))
            } else {
                waiter.continuation.resume(
                    returning: .queued("no uplink that table '\(waiter.table)' may use is available"))
            }
        }
    }

    /// Answers every waiter `queued` and refuses new requests.
    func stop() {
        let waiters = state.withLock { state in
            state.stopped = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: .queued("the gateway is stopping")) }
    }
}
