/// A conflict or a rejected change, as ``DallyClient/conflicts(table:includeSettled:limit:)``
/// lists it.
///
/// `kind` is `conflict` (the cloud's row had moved on; ``server`` holds it) or `error` (the
/// cloud refused the change; ``error`` says why). An `open` record's change is parked until
/// settled with ``DallyClient/settle(table:id:_:)``.
///
/// For example:
/// ```swift
/// for conflict in try await client.conflicts() where conflict.status == "open" {
///     try await client.settle(table: conflict.table, id: conflict.id, .takeServer)
/// }
/// ```
public struct Conflict: Codable, Sendable {
    /// The table of the row in conflict.
    public let table: String
    /// The row's id.
    public let id: String
    /// `conflict` or `error`.
    public let kind: String
    /// `open` or `resolved`.
    public let status: String
    /// When it was detected, ms since 1970.
    public let detectedAt: Int64
    /// The table's conflict policy that met it (`manual`, `server_wins`, …).
    public let policy: String?
    /// `none` while open, else `server`, `client`, …
    public let winner: String?
    /// The cloud's row: `{"version","updated_at","deleted","values"}`.
    public let server: JSONValue?
    /// For `error`: `{"code","message","field"}` from the cloud.
    public let error: JSONValue?
    /// The local row, nil when it is gone.
    public let local: Row<JSONValue>?

    private enum CodingKeys: String, CodingKey {
        case table, id, kind, status, policy, winner, server, error, local
        case detectedAt = "detected_at"
    }
}
