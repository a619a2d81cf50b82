import Synchronization

/// Why a parked long-poll ended (not to be confused with the scheduler's `WakeReason`, why an
/// uplink is woken).
public enum LongPollEnd: Sendable, Equatable {
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
        case waiting(CheckedContinuation<LongPollEnd, Never>)
        case woken(LongPollEnd)
    }

    private let state = Mutex(State.idle)

    public init() {}

    /// Suspends until the waiter is woken; returns at once if it already was.
    func wait() async -> LongPollEnd {
        await withCheckedContinuation { continuation in
            let early: LongPollEnd? = state.withLock { state in
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
    public func resume(_ reason: LongPollEnd) {
        let continuation: CheckedContinuation<LongPollEnd, Never>? = state.withLock { state in
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
