import Synchronization

/// A value read from the system (free space, a file's size) at most once per `interval`, so
/// that the check on every local write costs a clock read, not a system call.
///
/// ```swift
/// let size = ThrottledReading(interval: .seconds(1)) { DatabaseFiles.bytes(of: path) }
/// let bytes = size.value   // read at most once a second
/// ```
final class ThrottledReading<Value: Sendable>: Sendable {
    let interval: Duration
    private let read: @Sendable () -> Value
    private let last = Mutex<(at: ContinuousClock.Instant, value: Value)?>(nil)

    init(interval: Duration, read: @escaping @Sendable () -> Value) {
        self.interval = interval
        self.read = read
    }

    var value: Value {
        let now = ContinuousClock.now
        return last.withLock { last in
            if let last, now - last.at < interval { return last.value }
            let value = read()
            last = (now, value)
            return value
        }
    }
}
