/// One uplink of the gateway as `GET /v1/admin/uplinks` shows it (admin token).
///
/// For example:
/// ```swift
/// for uplink in try await admin.uplinks() { print(uplink.name, uplink.networkClass, uplink.available) }
/// ```
public struct UplinkStatus: Decodable, Sendable {
    /// The uplink's configured name (`default` for the one a `[cloud]` section implies).
    public let name: String
    /// Its network class: `wired`, `wifi`, `cellular`, `satellite`, …
    public let networkClass: String
    /// Where it reaches the cloud.
    public let url: String
    /// The cloud node requests go to now (`url` unless it does not answer and the uplink lists
    /// others); nil from a gateway older than 2026-11-30.
    public let node: String?
    /// The override: `auto`, `available` or `unavailable`.
    public let availability: UplinkAvailability
    /// Whether the gateway takes it as up.
    public let available: Bool
    /// Up and not backing off after a failure.
    public let usable: Bool
    /// The whole document, counters included (`wake_ups`, `requests`, `bytes_up`, …).
    public let document: JSONValue

    private enum CodingKeys: String, CodingKey {
        case name, url, node, availability, available, usable
        case networkClass = "class"
    }

    public init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: CodingKeys.self)
        name = try object.decode(String.self, forKey: .name)
        networkClass = try object.decode(String.self, forKey: .networkClass)
        url = try object.decode(String.self, forKey: .url)
        node = try object.decodeIfPresent(String.self, forKey: .node)
        availability = try object.decode(UplinkAvailability.self, forKey: .availability)
        available = try object.decode(Bool.self, forKey: .available)
        usable = try object.decode(Bool.self, forKey: .usable)
        document = try JSONValue(from: decoder)
    }
}
