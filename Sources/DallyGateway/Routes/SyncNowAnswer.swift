import DallyStore
import DallySyncEngine

/// `POST /v1/tables/{t}/sync`'s answer: `{"status":"synced","sent","accepted","conflicts",
/// "rejected","received"}` (200), or `{"status":"queued","reason"}` (202).
enum SyncNowAnswer: Encodable {
    case synced(SyncReport)
    case queued(reason: String)

    init(_ outcome: SyncOutcome) {
        switch outcome {
        case .synced(let report): self = .synced(report)
        case .queued(let reason): self = .queued(reason: reason)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case status, sent, accepted, conflicts, rejected, received, reason
    }

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .synced(let report):
            try object.encode("synced", forKey: .status)
            try object.encode(report.sent, forKey: .sent)
            try object.encode(report.accepted, forKey: .accepted)
            try object.encode(report.conflicts, forKey: .conflicts)
            try object.encode(report.rejected, forKey: .rejected)
            try object.encode(report.received, forKey: .received)
        case .queued(let reason):
            try object.encode("queued", forKey: .status)
            try object.encode(reason, forKey: .reason)
        }
    }
}
