import DallyCore
import DallyObjects
import DallySync

/// One section of a batch ruled on before its table's counter is locked: what each change will
/// do, without the versions it will take. Pure; ``PostgresBatchApplier`` reads the rows it
/// rules against and writes what ``assign(policy:version:writeVersions:)`` returns.
///
/// Ruling before the lock keeps the lock short: batches of one table apply one after another
/// however many nodes there are, so only the work that needs the next version (assigning it and
/// writing the rows) waits for the batches before. The rows are read again under the lock only
/// when the table moved since (see ``PostgresBatchApplier``).
///
/// ```swift
/// var rows = readRows                       // [id: SectionPlan.Row], as the cloud has them
/// var writes = 0
/// let plan = SectionPlan(section, decoded, rows: &rows, writes: &writes, held: [], origin: "gw/r1",
///                        batchID: "b7", policy: .lastWriterWins, positions: [0, 1])
/// var version: Int64 = 41                   // the locked counter
/// var written: [Int64] = []
/// let (results, toWrite) = plan.assign(policy: .lastWriterWins, version: &version, writeVersions: &written)
/// ```
struct SectionPlan {
    /// The cloud's row as read, or as an earlier section of this batch left it.
    struct Row {
        var facts: ChangeRuling.Current
        var deleted: Bool
        /// Every column's value in schema order, as it goes on the wire (empty for a tombstone,
        /// and for a row this batch writes: no later change of the batch reads its values).
        var values: [JSONValue]

        /// The row as a conflict's server side, with the values of `positions` (schema positions).
        func changedRow(id: String, positions: [Int]) -> ChangePage.ChangedRow {
            ChangePage.ChangedRow(
                id: id, version: facts.version, updatedAt: facts.updatedAt, deleted: deleted,
                values: deleted ? [] : positions.map { $0 < values.count ? values[$0] : .null })
        }
    }

    /// A change to write at `version`.
    struct Write {
        let decoded: DecodedChange
        let version: Int64
    }

    /// What one change does.
    enum Step {
        /// Rejected, or already applied at a version the cloud stored.
        case answered(BatchAnswer.RowResult)
        /// Written earlier in this batch (by another section of the same table): answered with
        /// the version that write takes.
        case writtenBefore(write: Int, id: String)
        case write(DecodedChange)
        case conflict(id: String, winner: BatchAnswer.Winner, server: ChangePage.ChangedRow, change: DecodedChange)
    }

    let steps: [Step]

    /// Rules on a section's changes. `rows` holds the table's rows the changes name and is left
    /// as this section leaves them; `writes` counts the table's writes so far in this batch
    /// (a row this batch writes carries the placeholder version `-(its write's index + 1)`
    /// until the counter is locked).
    init(
        _ section: BatchRequest.Section, _ decoded: [Result<DecodedChange, DallyError>], rows: inout [String: Row],
        writes: inout Int, held: Set<ContentHash>, origin: String, batchID: String, policy: ConflictPolicy,
        positions: [Int]
    ) {
        var steps: [Step] = []
        steps.reserveCapacity(section.changes.count)
        for (change, outcome) in zip(section.changes, decoded) {
            let decodedChange: DecodedChange
            switch outcome {
            case .success(let value): decodedChange = value
            case .failure(let error):
                steps.append(.answered(.rejected(id: change.id, .init(error))))
                continue
            }
            let row = rows[change.id]
            let absent = decodedChange.references.first { !held.contains($0.reference.hash) }
            let ruling = ChangeRuling.rule(
                change, origin: origin, batchID: batchID, policy: policy, current: row?.facts, absentObject: absent)
            switch ruling {
            case .alreadyApplied(let stored):
                steps.append(
                    stored < 0
                        ? .writtenBefore(write: Int(-stored - 1), id: change.id)
                        : .answered(.accepted(id: change.id, version: stored)))
            case .rejected(let error):
                steps.append(.answered(.rejected(id: change.id, .init(error))))
            case .write:
                rows[change.id] = Self.placeholder(change, write: writes, origin: origin, batchID: batchID)
                writes += 1
                steps.append(.write(decodedChange))
            case .conflict(let winner):
                // `row` is set: the rule only finds a conflict with an existing row.
                let server = row?.changedRow(id: change.id, positions: positions)
                    ?? ChangePage.ChangedRow(id: change.id, version: 0, updatedAt: 0, deleted: true, values: [])
                if winner == .client {
                    rows[change.id] = Self.placeholder(change, write: writes, origin: origin, batchID: batchID)
                    writes += 1
                }
                steps.append(.conflict(id: change.id, winner: winner, server: server, change: decodedChange))
            }
        }
        self.steps = steps
    }

    /// The section's results and writes once the table's counter is locked: each write takes
    /// the next `version`, and `writeVersions` records it by the write's index in the batch.
    func assign(policy: ConflictPolicy, version: inout Int64, writeVersions: inout [Int64])
        -> (results: [BatchAnswer.RowResult], writes: [Write])
    {
        var results: [BatchAnswer.RowResult] = []
        results.reserveCapacity(steps.count)
        var writes: [Write] = []
        writes.reserveCapacity(steps.count)
        for step in steps {
            switch step {
            case .answered(let result):
                results.append(result)
            case .writtenBefore(let write, let id):
                results.append(.accepted(id: id, version: writeVersions[write]))
            case .write(let change):
                version += 1
                writes.append(Write(decoded: change, version: version))
                writeVersions.append(version)
                results.append(.accepted(id: change.change.id, version: version))
            case .conflict(let id, let winner, let server, let change):
                if winner == .client {
                    version += 1
                    writes.append(Write(decoded: change, version: version))
                    writeVersions.append(version)
                }
                let conflict = BatchAnswer.Conflict(
                    policy: policy, winner: winner, version: winner == .client ? version : server.version, server: server)
                results.append(.conflict(id: id, conflict))
            }
        }
        return (results, writes)
    }

    /// A row this batch writes, as later changes of the batch see it.
    private static func placeholder(_ change: BatchRequest.Change, write: Int, origin: String, batchID: String) -> Row {
        Row(
            facts: .init(version: -Int64(write + 1), updatedAt: change.updatedAt, origin: origin, batch: batchID),
            deleted: change.deleted, values: [])
    }
}
