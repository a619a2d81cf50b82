import DallyCore
import DallySync
import Foundation

/// A new batch as a plan read it on a reader, encoded, not recorded yet
/// (``ReplicaStore/nextBatch(gateway:maxRows:scope:excluding:)``).
struct NewBatch: Sendable {
    let batch: OutgoingBatch
    /// Per table, the rows it carries.
    let sections: [PlannedSection]
    /// The batches in flight when it was read, whose rows it left out.
    let seen: Set<String>
    /// The highest local sequence number its tables held when it was read: a row is
    /// unchanged since while its sequence number is not above it (sequence numbers are one
    /// counter, and every later write takes a higher one). The tables' highest, not the
    /// rows': a settle then tells a table with no write since from one seek
    /// (``AcceptedRows``).
    let highestSeq: Int64
    let carriesObjects: Bool
    let createdAt: Int64

    /// The same batch without the rows `dropped` names (by table), under the same id: their
    /// pending changes left the outbox between the plan and its record (`drop_oldest` made
    /// room, and removed a row the cloud never had), so they must not reach the cloud. Nil when
    /// no row is left. Read again from its own body, as a resend is; the tallies of the
    /// sections it trims are counted from the outbox while the batch flies.
    ///
    /// ```swift
    /// let trimmed = try plan.leavingOut(["telemetry": ["r1"]], droppedCounts: ["telemetry": 7])
    /// ```
    func leavingOut(_ dropped: [String: Set<String>], droppedCounts: [String: Int64]) throws -> NewBatch? {
        var request = try BatchRequest.decode(JSONParser.parse(batch.body), maxRows: .max)
        for index in request.sections.indices {
            guard let gone = dropped[request.sections[index].table] else { continue }
            request.sections[index].changes.removeAll { gone.contains($0.id) }
        }
        request.sections.removeAll { $0.changes.isEmpty }
        guard !request.sections.isEmpty else { return nil }
        let sections = self.sections.compactMap { planned -> PlannedSection? in
            let count = droppedCounts[planned.table] ?? planned.droppedOnFull
            guard let gone = dropped[planned.table] else {
                var section = planned
                section.droppedOnFull = count
                return section
            }
            var section = PlannedSection(
                table: planned.table, ids: planned.ids.filter { !gone.contains($0) }, tally: planned.tally,
                droppedOnFull: count)
            section?.tallyStale = true
            return section
        }
        return NewBatch(
            batch: OutgoingBatch(
                batchID: batch.batchID, body: request.encode(), rows: request.rowCount, resent: false,
                uploads: request.sections.map(\.table), pulls: batch.pulls, outline: request.outline),
            sections: sections, seen: seen, highestSeq: highestSeq, carriesObjects: carriesObjects, createdAt: createdAt)
    }
}
