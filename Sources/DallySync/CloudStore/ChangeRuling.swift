import DallyCore
import DallyObjects

/// What a cloud store does with one decoded change, given the facts about the cloud's current
/// row: the part of applying a batch that every backend shares, so that a conflict is decided
/// identically whichever store (or node) applies it. Pure: the store reads the facts and
/// carries out the ruling.
public enum ChangeRuling: Sendable, Equatable {
    /// The same change, retried after its batch's answer was forgotten: answer accepted at the
    /// row's version and write nothing.
    case alreadyApplied(version: Int64)
    /// Refused, the rest of the batch goes on.
    case rejected(DallyError)
    /// Write the change at the table's next version.
    case write
    /// The row moved on underneath the writer; the table's policy picked `winner`. Write the
    /// change at the next version only when the client won.
    case conflict(BatchAnswer.Winner)

    /// The facts about the cloud's current row that a ruling needs.
    public struct Current: Sendable {
        public var version: Int64
        public var updatedAt: Int64
        /// The replica and the batch that wrote the row last.
        public var origin: String
        public var batch: String

        public init(version: Int64, updatedAt: Int64, origin: String, batch: String) {
            self.version = version
            self.updatedAt = updatedAt
            self.origin = origin
            self.batch = batch
        }
    }

    /// Rules on `change` from batch `batchID` of replica `origin`.
    ///
    /// - Parameters:
    ///   - current: the cloud's row, nil when there is none.
    ///   - absentObject: the first object the change references that the cloud does not hold
    ///     complete (only checked in `atomic_sync` tables).
    public static func rule(
        _ change: BatchRequest.Change, origin: String, batchID: String, policy: ConflictPolicy, current: Current?,
        absentObject: DecodedChange.ObjectUse?
    ) -> ChangeRuling {
        if let current, current.origin == origin, current.batch == batchID {
            return .alreadyApplied(version: current.version)
        }
        if let absentObject {
            return .rejected(
                DallyError(
                    .unknownObject,
                    "the cloud holds no complete object \(absentObject.reference.hash.hex); upload its chunks and manifest first",
                    field: absentObject.column))
        }
        let decision = ConflictRule.decide(
            policy: policy, baseVersion: change.baseVersion, updatedAt: change.updatedAt,
            current: current.map { ConflictRule.Current(version: $0.version, updatedAt: $0.updatedAt) })
        switch decision {
        case .apply: return .write
        case .conflict(let winner): return .conflict(winner)
        }
    }
}
