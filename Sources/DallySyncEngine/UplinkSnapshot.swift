import DallyCore
import DallyScheduler

/// One uplink's state and counters at the moment of asking.
public struct UplinkSnapshot: Sendable {
    public let name: String
    public let networkClass: String
    public let url: String
    public let override: AvailabilityOverride
    /// Up by override or probe; usable also means not waiting out a retry backoff.
    public let available: Bool
    public let usable: Bool
    /// Milliseconds since 1970 when a backoff ends.
    public let retryAt: Int64?
    public let eager: Bool
    /// Name and value of each counter (`wake_ups`, `requests`, `bytes_up`, …).
    public let counters: [(String, Int64)]

    /// `{"name":…,"class":…,"availability":"auto","available":true,…,"wake_ups":…}`.
    public func write(to writer: inout JSONWriter) {
        writer.raw("{\"name\":")
        writer.string(name)
        writer.raw(",\"class\":")
        writer.string(networkClass)
        writer.raw(",\"url\":")
        writer.string(url)
        writer.raw(",\"availability\":")
        writer.string(override.rawValue)
        writer.raw(",\"available\":")
        writer.bool(available)
        writer.raw(",\"usable\":")
        writer.bool(usable)
        writer.raw(",\"retry_at\":")
        if let retryAt { writer.int(retryAt) } else { writer.null() }
        writer.raw(",\"eager\":")
        writer.bool(eager)
        for (name, value) in counters {
            writer.raw(",")
            writer.key(name)
            writer.int(value)
        }
        writer.raw("}")
    }
}
