/// What a sync-now did: the table's changes went and it was pulled (`synced`, with counts), or
/// no allowed uplink could carry them now and they stay queued (`queued`, with the reason).
///
/// For example:
/// ```swift
/// switch try await orders.sync() {
/// case .synced(let report): print("\(report.accepted) accepted, \(report.conflicts) in conflict")
/// case .queued(let reason): print("later: \(reason)")
/// }
/// ```
public enum SyncAnswer: Codable, Sendable, Equatable {
    case synced(SyncReport)
    case queued(reason: String)

    private enum CodingKeys: String, CodingKey { case status, reason }

    public init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: CodingKeys.self)
        switch try object.decode(String.self, forKey: .status) {
        case "synced": self = .synced(try SyncReport(from: decoder))
        default: self = .queued(reason: try object.decodeIfPresent(String.self, forKey: .reason) ?? "")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .synced(let report):
            var object = encoder.container(keyedBy: CodingKeys.self)
            try object.encode("synced", forKey: .status)
            try report.encode(to: encoder)
        case .queued(let reason):
            var object = encoder.container(keyedBy: CodingKeys.self)
            try object.encode("queued", forKey: .status)
            try object.encode(reason, forKey: .reason)
        }
    }
}
