import DallyCore
import GRDB

/// Drops a clean row that left the gateway's scope from the replica (PROTOCOL.md §7.4).
///
/// The row stays as a local marker with no values, under a new local sequence number, so that
/// local change feeds see it go: `deleted = 2` (the replica's code reads any non-zero value as
/// deleted, so it is hidden from reads like a tombstone), and version 0, so that a later local
/// write to that id goes up as a change on a row the gateway never knew (a conflict the table's
/// policy decides) rather than as an edit of the row as it is elsewhere. Nothing goes upstream.
enum ScopeExit {
    /// The `deleted` value of a row that left the scope.
    static let marker: Int64 = 2

    /// Whether `old` is a row that can leave: held, clean (a dirty row keeps its pending change,
    /// which goes up as usual) and live.
    static func canLeave(_ old: StoredRow?) -> Bool {
        guard let old else { return false }
        return old.version != nil && !old.deleted
    }

    /// Replaces the clean row `old` with the marker and counts it as a tombstone.
    static func leave(_ old: StoredRow, updatedAt: Int64, table: TableSQL, db: Database, context: inout CommitContext) throws {
        let schema = table.schema
        let seq = context.nextSeq(for: schema.name)
        var arguments: [DatabaseValue] = [
            old.id.databaseValue, seq.databaseValue, updatedAt.databaseValue, marker.databaseValue, Int64(0).databaseValue,
        ]
        arguments.append(contentsOf: Array(repeating: DatabaseValue.null, count: schema.columns.count))
        try db.cachedStatement(sql: table.upsert).execute(values: arguments)
        if RowObjects.hasObjects(schema) {
            try RowObjects.trackDownstream([], table: schema, rowID: old.id, now: context.now, db: db)
        }
        context.count(schema.name, live: -1, tombstones: 1)
    }
}
