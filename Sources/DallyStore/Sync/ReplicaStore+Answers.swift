import DallyCore
import DallySync
import GRDB

extension ReplicaStore {
    /// Applies the cloud's answer to a batch in flight and then its downstream pages, each in
    /// sync transactions of at most `syncPieceRows` rows (``AnswerApplier``,
    /// ``DownstreamApplier``; an answer's pieces join while no local write waits,
    /// ``idleAnswerPieces``), and records the tables it pulled; local long-polls wake for
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
        let results = try AnswerApplier.pending(answer, of: batch)
        let pieceRows = syncPieceRows
        let idlePieces = idleAnswerPieces
        let groupCommit = self.groupCommit
        var start = results.startIndex
        while start < results.endIndex {
            let from = start
            let (applied, end) = try await groupCommit.perform(lane: .sync(.applyAnswer)) { db, context in
                // A piece at a time; while no local write waits for the writer, the next piece
                // joins the same transaction (up to ``idleAnswerPieces``): fewer commits, and
                // pieces that share B-tree pages write them once.
                var report = SyncReport()
                var end = from
                var pieces = 0
                repeat {
                    let piece = results[end..<min(end + pieceRows, results.endIndex)]
                    report.add(try AnswerApplier.apply(piece, batch: batch, tables: tables, db: db, context: &context))
                    end = piece.endIndex
                    pieces += 1
                } while end < results.endIndex && pieces < idlePieces && groupCommit.queued.local == 0
                // The flight ends with its last piece: one commit (and fsync) a batch fewer than
                // a transaction of its own took, 3 % of the writer's time in a drain.
                if end == results.endIndex { try AnswerApplier.finish(batch, db: db, context: context) }
                return (report, end)
            }
            report.add(applied)
            start = end
            try afterSyncPiece.withLock { try $0?() }
        }
        if results.isEmpty {
            try await groupCommit.perform(lane: .sync(.endFlight)) { db, context in
                try AnswerApplier.finish(batch, db: db, context: context)
            }
        }
        let downstream = try await applyChanges(answer.changes)
        report.received += downstream.received
        report.more = downstream.more
        return report
    }
}
