import GRDB

/// What the replica recorded of a table's declaration at the last open (`dally_settings`), so
/// that a change to it is acted on once: a scope (``ReplicaStore/reconcileScopes()``), or
/// `local_only` turned off (``LocalRowsQueue``).
///
/// ```swift
/// if try DeclarationRecord.recorded("scope:orders", db: db) != current {
///     …   // act on the change, then
///     try DeclarationRecord.record("scope:orders", current, db: db)
/// }
/// ```
enum DeclarationRecord {
    /// What was recorded under `key`; nil when nothing was.
    static func recorded(_ key: String, db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM dally_settings WHERE key = ?", arguments: [key])
    }

    static func record(_ key: String, _ value: String, db: Database) throws {
        try db.execute(
            sql: "INSERT INTO dally_settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            arguments: [key, value])
    }

    /// Moves `table`'s pull cursor back to version 0, so that its next pull brings it from
    /// scratch. Set, not deleted: a page of a request sent before finds a cursor below its
    /// `since` and is not applied (``DownstreamApplier``).
    static func pullFromScratch(_ table: String, db: Database) throws {
        try db.execute(
            sql: "INSERT INTO dally_cloud_cursors (tbl, version) VALUES (?, 0) ON CONFLICT(tbl) DO UPDATE SET version = 0",
            arguments: [table])
    }
}
