import DallyCore
import DallyObjects
import ServiceLifecycle
import Synchronization

/// Manifests waiting for their last chunks (`PUT /v1/objects/{hash}?wait=`, PROTOCOL.md
/// §13.3): a chunk stored on this node wakes every manifest that lists it.
///
/// On a long link a gateway sends the manifest while its last chunks are still on the wire, so
/// that the object is recorded the moment they land instead of a round trip after their
/// answer. A manifest that finds chunks missing watches for them, looks at the store again
/// and waits; a chunk stored on another cloud node wakes nobody here, so a wait is taken in
/// slices, and the store is read again after each. As a `Service` it ends every wait when the
/// cloud begins to stop, so that no manifest holds the server's drain for its whole wait.
///
/// ```swift
/// let watch = arrivals.watch(missing)
/// defer { arrivals.end(watch) }
/// // read the store again: a chunk stored before the watch began is found there
/// _ = await watch.wait(upTo: .seconds(1), on: clock)
/// ```
final class ChunkArrivals: Service, Sendable {
    /// One manifest's watch over the chunks it lacks.
    struct Watch: Sendable {
        fileprivate let id: Int
        fileprivate let waiter: Waiter

        /// Suspends until a watched chunk is stored here, `slice` passes on `clock`, or the
        /// task is cancelled (the gateway went away); whether a chunk arrived.
        func wait<C: Clock>(upTo slice: Duration, on clock: C) async -> Bool where C.Duration == Duration {
            let waiter = self.waiter
            let timer = Task {
                try? await clock.sleep(for: slice)
                waiter.resume(.timeout)
            }
            defer { timer.cancel() }
            let end = await withTaskCancellationHandler {
                await waiter.wait()
            } onCancel: {
                waiter.resume(.disconnected)
            }
            return end == .changed
        }
    }

    private struct State {
        var next = 0
        var watching: [Int: (chunks: Set<ContentHash>, waiter: Waiter)] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Waits for the cloud to stop, then ends every wait.
    func run() async throws {
        try? await gracefulShutdown()
        close()
    }

    /// Ends every wait and each one after: a manifest then answers with what is missing.
    func close() {
        let woken = state.withLock { state in
            state.closed = true
            return state.watching.values.map(\.waiter)
        }
        for waiter in woken { waiter.resume(.shutdown) }
    }

    /// Whether the cloud is stopping: manifests wait no more.
    var closed: Bool { state.withLock { $0.closed } }

    /// Manifests waiting now, for `/stats`.
    var waiting: Int { state.withLock { $0.watching.count } }

    /// Starts watching `chunks`; read the store after this, so that no arrival falls between.
    func watch(_ chunks: [ContentHash]) -> Watch {
        let waiter = Waiter()
        let id = state.withLock { state in
            state.next += 1
            state.watching[state.next] = (Set(chunks), waiter)
            if state.closed { waiter.resume(.shutdown) }
            return state.next
        }
        return Watch(id: id, waiter: waiter)
    }

    /// Stops a watch (each is woken once; a manifest still waiting takes a new one).
    func end(_ watch: Watch) {
        _ = state.withLock { $0.watching.removeValue(forKey: watch.id) }
    }

    /// A chunk was stored: wakes the manifests that wait for it.
    func stored(_ chunk: ContentHash) {
        let woken = state.withLock { state in
            state.watching.values.filter { $0.chunks.contains(chunk) }.map(\.waiter)
        }
        for waiter in woken { waiter.resume(.changed) }
    }
}
