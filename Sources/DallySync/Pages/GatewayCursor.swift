/// How far a gateway has pulled a table, as the cloud last saw it: the `since` of its latest
/// request. The cloud purges a tombstone only once every gateway seen within the table's
/// `tombstone_ttl` is past it (``CloudStore/purgeTombstones(table:upTo:before:)``).
public struct GatewayCursor: Sendable, Equatable, Hashable {
    public var gateway: String
    public var table: String
    public var version: Int64
    /// Milliseconds since 1970.
    public var seenAt: Int64

    public init(gateway: String, table: String, version: Int64, seenAt: Int64) {
        self.gateway = gateway
        self.table = table
        self.version = version
        self.seenAt = seenAt
    }
}
