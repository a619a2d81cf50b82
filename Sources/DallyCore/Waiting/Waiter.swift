import Synchronization

/// One parked wait. Woken exactly once: the first ``resume(_:)`` wins, later ones are ignored,
/// so a publisher, the timer and the connection can race to wake it safely. A waiter woken
/// before it waits returns at once: a disconnect that comes before the wait is not lost.
///
/// ```swift
/// let waiter = Waiter()
/// // on disconnect: waiter.resume(.disconnected)
/// let end = try await watch.wait(waiter, holding: ["orders": cursor], until: deadlineTick)
/// ```
public final class Waiter: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<LongPollEnd, Never>)
        case woken(LongPollEnd)
    }

    private let state = Mutex(State.idle)

    public init() {}

    /// Suspends until the waiter is woken; returns at once if it already was.
    public func wait() async -> LongPollEnd {
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
