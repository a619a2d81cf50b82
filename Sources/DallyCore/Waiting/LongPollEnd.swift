/// Why a parked wait ended (not to be confused with the scheduler's `WakeReason`, why an
/// uplink is woken).
public enum LongPollEnd: Sendable, Equatable {
    /// A key the waiter watches moved past the version it held (for a long-poll: a change
    /// newer than its cursor was committed to one of its tables).
    case changed
    /// The wait ran out.
    case timeout
    /// The client went away, or the waiting task was cancelled.
    case disconnected
    /// The server is stopping.
    case shutdown
}

