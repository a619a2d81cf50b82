import DallyCore
import DallySync
import GRDB

extension ReplicaStore {
    /// Applies the cloud's answer to a batch in flight and then its downstream pages, each in
    /// sync transactions of at most `syncPieceRows` rows (``AnswerApplier``,
    /// ``DownstreamApplier``), and records the tables it pulled; local long-polls wake for
    /// every row it changed.
    ///
    /// - Throws: ``StoreError`` when the answer is for a batch that is not in flight.
    public func applyAnswer(_ answer: BatchAnswer) async throws -> SyncReport {
        let tables = self.tables
        guard let batch = try await pool.read({ db in try AnswerApplier.flight(answer.batchID, db: db) }) else {
            throw StoreError("the cloud answered batch '\(answer.batchID)', which is not in flight")
        }
        var report = SyncReport()
        report.replayed = answer.replayed
        let results = answer.results.flatMap { section in section.rows.map { (table: section.table, result: $0) } }
        var start = results.startIndex
        while start < results.endIndex {
            let piece = results[start..<min(start + syncPieceRows, results.endIndex)]
            start = piece.endIndex
            report.add(
                try await groupCommit.perform(lane: .sync(.applyAnswer)) { db, context in
                    try AnswerApplier.apply(piece, batch: batch, tables: tables, db: db, context: &context)
                })
            try afterSyncPiece.withLock { try $0?() }
        }
        try await groupCommit.perform(lane: .sync(.endFlight)) { db, context in
            try AnswerApplier.finish(batch, db: db, context: context)
        }
        let downstream = try await applyChanges(answer.changes)
        report.received += downstream.received
        report.more = downstream.more
        return report
    }
}
