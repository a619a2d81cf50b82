import DallyCore
import DallySync
import GRDB

/// A table pulled again from scratch after the cloud answered with a `resync` page: the
/// gateway's cursor was behind the cloud's horizon, or ahead of the cloud's version, or went
/// back (PROTOCOL.md §4.8).
///
/// At the start every clean row of the table is noted in `dally_resync_rows`; each row a page
/// brings is crossed off; when the last page is applied, the rows left are those the cloud no
/// longer has. They become local tombstones (clean: nothing goes upstream), so local readers
/// see them go. Dirty rows are never noted: their changes still go up after the resync.
/// Batches and pulls name the table in ``BatchRequest/resyncing`` meanwhile, so that the
/// cloud pages on from the gateway's cursor, own rows included.
enum ResyncLedger {
    /// - Parameter counted: whether it counts as a resync in the table's stats (a pull the
    ///   cloud asked for); a fill of added columns (``ColumnFill``) does not. A resync that
    ///   begins during a fill keeps the fill's columns.
    static func begin(_ table: TableSQL, now: Int64, counted: Bool = true, db: Database) throws {
        let name = table.schema.name
        try db.execute(
            sql: """
                INSERT INTO dally_resync (tbl, started_at) VALUES (?, ?)
                ON CONFLICT(tbl) DO UPDATE SET started_at = excluded.started_at
                """,
            arguments: [name, now])
        try db.execute(sql: "DELETE FROM dally_resync_rows WHERE tbl = ?", arguments: [name])
        try db.execute(
            sql: """
                INSERT INTO dally_resync_rows (tbl, row_id)
                SELECT ?, id FROM \(table.sqlTable) WHERE version IS NOT NULL AND deleted = 0
                """,
            arguments: [name])
        if counted { try LifecycleLedger.add(name, resyncs: 1, db: db) }
    }

    static func isResyncing(_ table: String, db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM dally_resync WHERE tbl = ?"), arguments: [table]) ?? false
    }

    static func seen(_ rowID: String, table: String, db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM dally_resync_rows WHERE tbl = ? AND row_id = ?")
            .execute(arguments: [table, rowID])
    }

    /// Turns the rows the pull did not bring into local tombstones and ends the resync;
    /// returns how many rows it removed.
    ///
    /// A tombstone takes the row's version or `reached` (the last page's version), whichever is
    /// lower. A row can be missing from the pages because it was committed after they were read
    /// and came down first in another answer; the pulls go on from `reached`, bring it again,
    /// and the lower version lets it back in (a tombstone at the row's own version would shut it
    /// out for good). A row the cloud has lost never comes again, and stays removed.
    static func finish(_ table: TableSQL, reached: Int64, db: Database, context: inout CommitContext) throws -> Int {
        let name = table.schema.name
        var removed = 0
        for id in try String.fetchAll(db, sql: "SELECT row_id FROM dally_resync_rows WHERE tbl = ?", arguments: [name]) {
            // A row written locally since the resync began is dirty now and keeps its change.
            guard let old = try CloudRowWriter.current(id, table: table, db: db), let version = old.version, !old.deleted
            else { continue }
            let gone = ChangePage.ChangedRow(
                id: id, version: min(version, reached), updatedAt: context.now, deleted: true, values: [])
            try CloudRowWriter.write(gone, columns: [], table: table, old: old, db: db, context: &context)
            removed += 1
        }
        try db.execute(sql: "DELETE FROM dally_resync_rows WHERE tbl = ?", arguments: [name])
        try db.execute(sql: "DELETE FROM dally_resync WHERE tbl = ?", arguments: [name])
        if removed > 0 { try LifecycleLedger.add(name, cloudRemoved: Int64(removed), db: db) }
        return removed
    }

    /// The tables being pulled again from scratch.
    static func tables(db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT tbl FROM dally_resync ORDER BY tbl")
    }
}
