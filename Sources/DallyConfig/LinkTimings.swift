import DallyCore

/// How an uplink judges that a transfer has failed, how large it makes one request, and how
/// long it keeps an idle connection: by progress rather than by a fixed total, so that a
/// 2 kbit/s satellite hop completes what a gigabit link does, only slower.
///
/// A transfer fails when no byte has moved for ``idleTimeout`` (beyond the time the bytes
/// already handed to the connection need on the measured link), or when, over a whole
/// ``minRateWindow``, it moved fewer than ``minRate`` bytes per second. Requests (a batch's
/// rows, an object chunk's frames) are sized so that one takes about ``targetRequestTime`` on
/// the measured link. A connection with no request is kept ``keepAlive`` for the next one: on a
/// long link a new connection costs round trips before its first byte (TCP, and TLS).
///
/// Read from `[cloud]` (the defaults of every uplink) and from each `[[uplinks]]` block:
///
/// ```toml
/// [[uplinks]]
/// name = "sat"
/// class = "satellite"
/// idle_timeout = "2m"          # default 60s
/// min_rate = 16                # bytes per second; default 16 (128 bit/s)
/// min_rate_window = "10m"      # default 5m
/// target_request_time = "30s"  # default 30s
/// keep_alive = "10m"           # default 60s
/// ```
public struct LinkTimings: Sendable, Equatable {
    /// The longest time without a byte moving, in either direction, before a transfer is cut.
    public var idleTimeout: Duration = .seconds(60)
    /// The slowest rate, in bytes per second, a transfer may keep up for a whole
    /// ``minRateWindow``; 0 turns the floor off.
    public var minRate = 16
    /// How long a transfer may stay under ``minRate`` before it is cut.
    public var minRateWindow: Duration = .seconds(300)
    /// How long one request should take on the measured link: batches and object frames are
    /// sized to it.
    public var targetRequestTime: Duration = .seconds(30)
    /// How long a connection to the cloud with no request under way stays open for the next:
    /// wakes closer together than this pay no new handshake. A cloud (or a NAT on the way) that
    /// closes it sooner costs nothing more than a new connection; one that drops it silently
    /// costs the next request `idle_timeout`.
    public var keepAlive: Duration = .seconds(60)

    public init() {}

    static let keys = ["idle_timeout", "min_rate", "min_rate_window", "target_request_time", "keep_alive"]

    /// Reads the five keys from `section`, each defaulting to `defaults`' value.
    static func read(_ section: TOMLSection, defaults: LinkTimings) throws(KeyError) -> LinkTimings {
        var timings = defaults
        timings.idleTimeout = try section.duration(
            "idle_timeout", default: defaults.idleTimeout, minimum: .milliseconds(100), maximum: .seconds(3_600))
        timings.minRate = try section.int("min_rate", default: defaults.minRate, range: 0...1_000_000_000)
        timings.minRateWindow = try section.duration(
            "min_rate_window", default: defaults.minRateWindow, minimum: .milliseconds(100), maximum: .seconds(86_400))
        timings.targetRequestTime = try section.duration(
            "target_request_time", default: defaults.targetRequestTime, minimum: .milliseconds(100),
            maximum: .seconds(3_600))
        timings.keepAlive = try section.duration(
            "keep_alive", default: defaults.keepAlive, minimum: .seconds(1), maximum: .seconds(3_600))
        return timings
    }
}
