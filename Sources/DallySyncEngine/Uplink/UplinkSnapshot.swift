import DallyCore
import DallyScheduler

/// One uplink's state and counters at the moment of asking.
public struct UplinkSnapshot: Sendable, Encodable {
    public let name: String
    public let networkClass: String
    public let url: String
    /// The cloud node requests go to now: `url`, or the next of the uplink's list while the
    /// first does not answer (``CloudNodes``).
    public let node: String
    public let override: AvailabilityOverride
    /// Up by override or probe; usable also means not waiting out a retry backoff.
    public let available: Bool
    /// Milliseconds since 1970 when `available` last changed (`nil`: not since the start).
    public let availabilityChangedAt: Int64?
    public let usable: Bool
    /// Milliseconds since 1970 when a backoff ends.
    public let retryAt: Int64?
    public let eager: Bool
    /// Name and value of each counter (`wake_ups`, `requests`, `bytes_up`, …).
    public let counters: [(String, Int64)]
    /// The link as measured from this uplink's transfers.
    public let link: LinkEstimate

    /// `{"name":…,"class":…,"url":…,"node":…,"availability":"auto","available":true,…,"wake_ups":…}`.
    public func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingName.self)
        try object.encode(name, for: "name")
        try object.encode(networkClass, for: "class")
        try object.encode(url, for: "url")
        try object.encode(node, for: "node")
        try object.encode(override.rawValue, for: "availability")
        try object.encode(available, for: "available")
        try object.encode(availabilityChangedAt, for: "availability_changed_at")
        try object.encode(usable, for: "usable")
        try object.encode(retryAt, for: "retry_at")
        try object.encode(eager, for: "eager")
        try object.encode(counters: counters)
        try object.encode(link, for: "link")
    }
}
