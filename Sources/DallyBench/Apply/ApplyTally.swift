import DallySync

/// Counts of row results across answers.
struct ApplyTally {
    var accepted = 0
    var conflicts = 0
    var rejected = 0

    mutating func add(_ answer: BatchAnswer) {
        for section in answer.results {
            for row in section.rows {
                switch row {
                case .accepted: accepted += 1
                case .conflict: conflicts += 1
                case .rejected: rejected += 1
                }
            }
        }
    }

    mutating func add(_ other: ApplyTally) {
        accepted += other.accepted
        conflicts += other.conflicts
        rejected += other.rejected
    }

    var text: String { "accepted \(accepted), conflicts \(conflicts), rejected \(rejected)" }
}
