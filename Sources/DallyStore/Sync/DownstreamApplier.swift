import DallyCore
import DallySync
import GRDB

/// Applies pages of cloud changes to the replica and advances the per-table cloud cursors.
///
/// A page is applied in pieces of a bounded number of rows, each one transaction that moves
/// the table's cursor to the version of its last row (the whole page's version with the last
/// piece). Pages list rows in version order, so a piece's rows and the cursor always move
/// together: a process stopped between pieces pulls again from the last piece applied.
enum DownstreamApplier {
    /// Applies `rows`, a run of `page`'s rows, moves the table's cursor to `cursor`, and
    /// returns how many rows changed locally.
    ///
    /// A row with local changes the cloud has not accepted is left alone: its pending change
    /// goes up with the base version it started from, and the cloud's conflict rule decides.
    /// A row already at the page's version or later (this replica's own change, echoed) is
    /// skipped.
    static func apply(
        _ rows: ArraySlice<ChangePage.ChangedRow>, of page: ChangePage, cursor: Int64, tables: [String: TableSQL],
        db: Database, context: inout CommitContext
    ) throws -> Int {
        guard let table = tables[page.table], !table.schema.policy.localOnly else { return 0 }
        let columns = CloudRowWriter.positions(of: page.columns, in: table.schema)
        var applied = 0
        for row in rows {
            let old = try CloudRowWriter.current(row.id, table: table, db: db)
            if let old, old.version == nil {
                try ConflictLog.refreshServerSide(table: table, row: row, pageColumns: page.columns, db: db)
                continue
            }
            if let version = old?.version, version >= row.version { continue }
            try CloudRowWriter.write(row, columns: columns, table: table, old: old, db: db, context: &context)
            applied += 1
        }
        try db.execute(
            sql: """
                INSERT INTO dally_cloud_cursors (tbl, version) VALUES (?, ?)
                ON CONFLICT(tbl) DO UPDATE SET version = MAX(version, excluded.version)
                """,
            arguments: [page.table, cursor])
        return applied
    }
}

/// What one exchange with the cloud did.
public struct SyncReport: Sendable, Equatable {
    public var sent = 0
    public var accepted = 0
    public var conflicts = 0
    public var rejected = 0
    /// Rows the cloud sent down that changed the replica.
    public var received = 0
    /// Whether the cloud answered from its record of an earlier attempt.
    public var replayed = false
    /// Whether a downstream page said more is waiting.
    public var more = false

    public init() {}

    public mutating func add(_ other: SyncReport) {
        sent += other.sent
        accepted += other.accepted
        conflicts += other.conflicts
        rejected += other.rejected
        received += other.received
        replayed = replayed || other.replayed
        more = other.more
    }
}

extension ReplicaStore {
    /// Applies pages of cloud changes in sync transactions of at most `syncPieceRows` rows
    /// (``DownstreamApplier``), and records that `pulled` (the tables the request asked for)
    /// were brought up to date now, with the last piece.
    public func applyChanges(_ pages: [ChangePage], pulled: [String] = []) async throws -> SyncReport {
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
