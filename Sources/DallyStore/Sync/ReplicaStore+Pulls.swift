import DallyCore
import DallySync
import GRDB

extension ReplicaStore {
    /// Applies pages of cloud changes in sync transactions of at most `syncPieceRows` rows
    /// (``DownstreamApplier``), and records that `pulled` (the tables the request asked for)
    /// were brought up to date now, with the last piece.
    ///
    /// - Parameter unlessResyncing: leave out pages of a table in a resync (pages that came
    ///   with a notification: only the resync's own pulls, from version 0, may end it).
    public func applyChanges(
        _ pages: [ChangePage], pulled: [String] = [], unlessResyncing: Bool = false
    ) async throws -> SyncReport {
        let tables = self.tables
        var report = SyncReport()
        var pieces: [(page: ChangePage, rows: Range<Int>, cursor: Int64)] = []
        for page in pages {
            var start = 0
            repeat {
                let end = min(start + syncPieceRows, page.rows.count)
                let cursor = end == page.rows.count ? page.version : page.rows[end - 1].version
                pieces.append((page, start..<end, cursor))
                start = end
            } while start < page.rows.count
            report.more = report.more || page.more
        }
        for (index, piece) in pieces.enumerated() {
            let last = index == pieces.count - 1
            report.received += try await groupCommit.perform(lane: .sync(.applyPage)) { db, context in
                if unlessResyncing, try ResyncLedger.isResyncing(piece.page.table, db: db) { return 0 }
                let applied = try DownstreamApplier.apply(
                    piece.page.rows[piece.rows], of: piece.page, cursor: piece.cursor, tables: tables, db: db,
                    context: &context)
                if last { try PullLog.record(pulled, at: context.now, db: db) }
                return applied
            }
            try afterSyncPiece.withLock { try $0?() }
        }
        if pieces.isEmpty, !pulled.isEmpty {
            try await groupCommit.perform(lane: .sync(.applyPage)) { db, context in try PullLog.record(pulled, at: context.now, db: db) }
        }
        return report
    }
}
