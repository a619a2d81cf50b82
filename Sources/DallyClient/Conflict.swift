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
    public let table: String
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

/// How to settle an open conflict.
///
/// For example: `try await client.settle(table: "docs", id: "d1", .write(["text": "merged"]))`.
public enum Settlement: Sendable {
    /// Send the local row again, based on the cloud's version (for an error: after fixing its cause).
    case takeLocal
    /// Replace the local row with the cloud's (conflicts only).
    case takeServer
    /// Write this merged row (as a PUT) and send it.
    case write(any Encodable & Sendable)
}

/// `{"take":"local"}`, `{"take":"server"}` or `{"values":{…}}`.
struct SettlementBody: Encodable {
    let settlement: Settlement

    private enum CodingKeys: String, CodingKey { case take, values }

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingKeys.self)
        switch settlement {
        case .takeLocal: try object.encode("local", forKey: .take)
        case .takeServer: try object.encode("server", forKey: .take)
        case .write(let values): try object.encode(EncodableBox(values), forKey: .values)
        }
    }
}

/// `{"conflicts":[…]}`.
struct ConflictList: Decodable {
    let conflicts: [Conflict]
}
