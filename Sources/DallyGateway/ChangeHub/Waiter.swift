import Synchronization

/// Why a long-poll stopped waiting.
public enum WakeReason: Sendable, Equatable {
    /// A change newer than the waiter's cursor was committed to one of its tables.
    case changed
    /// The wait ran out.
    case timeout
    /// The client went away.
    case disconnected
    /// The gateway is stopping.
    case shutdown
}

/// One parked long-poll. Woken exactly once: the first ``resume(_:)`` wins, later ones are
/// ignored, so the hub, the timer and the connection can race to wake it safely.
public final class Waiter: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<WakeReason, Never>)
        case woken(WakeReason)
    }

    private let state = Mutex(State.idle)

    public init() {}

    /// Suspends until the waiter is woken; returns at once if it already was.
    func wait() async -> WakeReason {
        await withCheckedContinuation { continuation in
            let early: WakeReason? = state.withLock { state in
                switch state {
                case .idle:
                    state = .waiting(continuation)
                    return nil
                case .woken(let reason):
                    return reason
                case .waiting:
                    preconditionFailure("a waiter waits once")
                }
            }
            if let early { continuation.resume(returning: early) }
        }
    }

    /// Wakes the waiter with `reason` unless it was woken before.
    public func resume(_ reason: WakeReason) {
        let continuation: CheckedContinuation<WakeReason, Never>? = state.withLock { state in
            switch state {
            case .idle:
                state = .woken(reason)
                return nil
            case .waiting(let continuation):
                state = .woken(reason)
                return continuation
            case .woken:
                return nil
            }
        }
        continuation?.resume(returning: reason)
    }
}
