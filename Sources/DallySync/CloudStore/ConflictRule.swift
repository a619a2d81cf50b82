import DallyCore

/// Decides what happens to an incoming change, given the cloud's current row (Simba §3.3).
///
/// A change carries the version its writer last saw. When the cloud's row is still at that
/// version, or does not exist, the change applies. Otherwise the row moved on underneath the
/// writer and the table's policy picks a side. Pure: the store supplies the facts.
public enum ConflictRule {
    public enum Decision: Sendable, Equatable {
        case apply
        case conflict(BatchAnswer.Winner)
    }

    /// The facts about the cloud's current row that the rule needs.
    public struct Current: Sendable {
        public var version: Int64
        public var updatedAt: Int64

        public init(version: Int64, updatedAt: Int64) {
            self.version = version
            self.updatedAt = updatedAt
        }
    }

    public static func decide(
        policy: ConflictPolicy, baseVersion: Int64?, updatedAt: Int64, current: Current?
    ) -> Decision {
        guard let current, baseVersion != current.version else { return .apply }
        switch policy {
        case .serverWins: return .conflict(.server)
        case .clientWins: return .conflict(.client)
        // Ties go to the cloud: the row every other gateway already has stays put.
        case .lastWriterWins: return .conflict(updatedAt > current.updatedAt ? .client : .server)
        case .manual: return .conflict(.none)
        }
    }
}
