import DallyCore
import Synchronization

/// The waiters of one notify stream, one after another, under one watch of its connection.
///
/// A long-poll parks one ``Waiter`` and watches its connection while it waits. A stream parks
/// a new waiter after every line; watching the connection anew each time would change the
/// channel's pipeline twice per change and gateway. Here the connection is watched once, for
/// the whole stream, and its loss wakes whichever waiter is parked then, or the next one.
///
/// ```swift
/// let waiters = StreamWaiters()
/// // on disconnect: waiters.disconnect()
/// while let waiter = waiters.next() { … await hub.wait(waiter, …) … }
/// ```
final class StreamWaiters: Sendable {
    private struct State {
        var current: Waiter?
        var gone = false
    }

    private let state = Mutex(State())

    /// A fresh waiter to park, or nil once the connection is gone.
    func next() -> Waiter? {
        state.withLock { state in
            guard !state.gone else { return nil }
            let waiter = Waiter()
            state.current = waiter
            return waiter
        }
    }

    /// The connection is gone: wakes the parked waiter and refuses new ones.
    func disconnect() {
        let waiter = state.withLock { state in
            state.gone = true
            return state.current
        }
        waiter?.resume(.disconnected)
    }
}
