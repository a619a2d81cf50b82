import DallyCore
import DallySync
import GRDB

/// Applies pages of cloud changes to the replica and advances the per-table cloud cursors.
///
/// A page is applied in pieces of a bounded number of rows, each one transaction that moves
/// the table's cursor to the version of its last row (the whole page's version with the last
/// piece). Pages list rows in version order, so a piece's rows and the cursor always move
/// together: a process stopped between pieces pulls again from the last piece applied.
///
/// A page marked `resync` starts a pull from scratch (``ResyncLedger``): until the table's
/// last page, every clean row not sent again is noted, and at the end those rows, which the
/// cloud no longer has, become local tombstones (no outbox entry: nothing goes upstream). A
/// resync that fills added columns (``ColumnFill``) also brings their values into rows it
/// already holds at the page's version.
enum DownstreamApplier {
    /// Applies `rows`, a run of `page`'s rows, moves the table's cursor to `cursor`, and
    /// returns how many rows changed locally.
    ///
    /// A row with local changes the cloud has not accepted is left alone: its pending change
    /// goes up with the base version it started from, and the cloud's conflict rule decides.
    /// A row already at the page's version or later (this replica's own change, echoed) is
    /// skipped; during a resync only one at the very same version is, since after a restore
    /// either side may hold versions the other lost.
    static func apply(
        _ rows: ArraySlice<ChangePage.ChangedRow>, of page: ChangePage, cursor: Int64, tables: [String: TableSQL],
        db: Database, context: inout CommitContext
    ) throws -> Int {
        guard let table = tables[page.table], !table.schema.policy.localOnly else { return 0 }
        // A page from past the table's cursor would leave a gap: the cursor was moved back
        // since the request left (a scope change at start, ``ReplicaStore/reconcileScopes()``,
        // while a batch with the old scope was in flight). It is pulled again from the cursor.
        // A resync page starts from 0, never past the cursor.
        if let held = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT version FROM dally_cloud_cursors WHERE tbl = ?"), arguments: [page.table]),
            page.since > held
        {
            return 0
        }
        if page.resync, rows.startIndex == page.rows.startIndex { try ResyncLedger.begin(table, now: context.now, db: db) }
        let resyncing = try page.resync || ResyncLedger.isResyncing(table.schema.name, db: db)
        let columns = CloudRowWriter.positions(of: page.columns, in: table.schema)
        let filling = resyncing ? try ColumnFill.positions(in: table.schema, db: db) : []
        var applied = 0
        for row in rows {
            if resyncing { try ResyncLedger.seen(row.id, table: table.schema.name, db: db) }
            let old = try CloudRowWriter.current(row.id, table: table, db: db)
            if row.left {
                // Out of this gateway's scope now: drop the clean copy; a dirty one keeps its
                // change, which goes up as usual.
                guard let old, ScopeExit.canLeave(old) else { continue }
                try ScopeExit.leave(old, updatedAt: row.updatedAt, table: table, db: db, context: &context)
                applied += 1
                continue
            }
            if let old, old.version == nil {
                try ConflictLog.refreshServerSide(table: table, row: row, pageColumns: page.columns, db: db)
                if !filling.isEmpty,
                    try ColumnFill.fillPending(
                        row, into: old, columns: columns, filling: filling, table: table, db: db, context: &context)
                {
                    applied += 1
                }
                continue
            }
            if let old, let version = old.version, resyncing ? version == row.version : version >= row.version {
                // Added columns being filled (``ColumnFill``): the cloud's values come in.
                guard version == row.version, !filling.isEmpty,
                    ColumnFill.differs(row, from: old, columns: columns, filling: filling, schema: table.schema)
                else { continue }
            }
            try CloudRowWriter.write(row, columns: columns, table: table, old: old, db: db, context: &context)
            applied += 1
        }
        // A resync may move the cursor back (a cloud restored from an older backup).
        try db.execute(
            sql: resyncing
                ? "INSERT INTO dally_cloud_cursors (tbl, version) VALUES (?, ?) ON CONFLICT(tbl) DO UPDATE SET version = excluded.version"
                : """
                INSERT INTO dally_cloud_cursors (tbl, version) VALUES (?, ?)
                ON CONFLICT(tbl) DO UPDATE SET version = MAX(version, excluded.version)
                """,
            arguments: [page.table, cursor])
        if resyncing, !page.more, rows.endIndex == page.rows.endIndex {
            applied += try ResyncLedger.finish(table, reached: cursor, db: db, context: &context)
        }
        return applied
    }
}
