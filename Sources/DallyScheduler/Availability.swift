/// How an administrator (or the OS, through the admin API) set an uplink.
public enum AvailabilityOverride: String, Sendable, CaseIterable {
    /// Use the uplink whatever the probe says.
    case available
    /// Never use the uplink.
    case unavailable
    /// Follow the probe.
    case auto
}

/// Whether an uplink may carry traffic: the override, the last probe, and the backoff after
/// failed requests.
public struct Availability: Sendable, Equatable {
    public var override: AvailabilityOverride = .auto
    /// The last probe's answer. An uplink that is never probed stays up, and failures alone
    /// (through the backoff) keep traffic off it.
    public var probedUp = true
    /// Failed requests in a row, and when the uplink may be tried again.
    public private(set) var failures = 0
    public private(set) var retryAt: Int64?

    public init() {}

    /// Up, by override or by probe.
    public var isAvailable: Bool {
        switch override {
        case .available: true
        case .unavailable: false
        case .auto: probedUp
        }
    }

    /// Available, and not waiting out a backoff at `now`.
    public func isUsable(at now: Int64) -> Bool { isAvailable && (retryAt.map { $0 <= now } ?? true) }

    /// A request failed: wait `delay` milliseconds before the next.
    public mutating func recordFailure(at now: Int64, delay: Int64) {
        failures += 1
        retryAt = now + delay
    }

    /// Ends the wait now (a sync-now asks for one immediate try); the failure count stays, so
    /// a further failure waits longer.
    public mutating func endBackoff() { retryAt = nil }

    /// A request or a probe got through: the backoff is over.
    public mutating func recordSuccess() {
        failures = 0
        retryAt = nil
    }
}
