import DallyCore
import GRDB

/// The rows a `local_only` table held when its declaration turned it into a synced one.
///
/// A local-only table's writes leave no outbox entry: none of it goes up. When the
/// declaration drops `local_only`, the rows it held would never reach the cloud (only those
/// changed later would), so at open each live row without a cloud version or an entry gets
/// one, as a row the cloud has not seen (no base version), and the objects the table's rows
/// name are queued for upload. The rows go with the next batches; a row the cloud already
/// holds under the same id meets it as a conflict, which the table's policy settles. The
/// table's tombstones stay local: the cloud never had those rows.
///
/// In a synced table a row without a cloud version always has an entry (its change waits), so
/// such a row comes only from a time the table was local-only. The search runs when the
/// declaration changed since the last open, and once at the first open of a replica older than
/// the record of it (`local_only:<table>`, ``DeclarationRecord``).
enum LocalRowsQueue {
    /// Queues `table`'s local rows if it stopped being local-only; returns how many.
    @discardableResult
    static func reconcile(_ table: TableSQL, now: Int64, db: Database) throws -> Int {
        let schema = table.schema
        let key = "local_only:\(schema.name)"
        let current = schema.policy.localOnly ? "true" : "false"
        guard try DeclarationRecord.recorded(key, db: db) != current else { return 0 }
        try DeclarationRecord.record(key, current, db: db)
        guard !schema.policy.localOnly else { return 0 }
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT \(table.selectList) FROM \(table.sqlTable) t
                WHERE deleted = 0 AND version IS NULL
                    AND NOT EXISTS (SELECT 1 FROM dally_outbox o WHERE o.tbl = ? AND o.row_id = t.id)
                """,
            arguments: [schema.name])
        for row in rows {
            let stored = RowDecoding.storedRow(row, schema: schema)
            try db.cachedStatement(sql: Outbox.upsert).execute(arguments: [
                schema.name, stored.id, now, now, nil, Outbox.estimatedBytes(id: stored.id, values: stored.values),
            ])
        }
        if !rows.isEmpty, RowObjects.hasObjects(schema) { try ObjectLedger.queueUploads(ofTable: schema.name, now: now, db: db) }
        return rows.count
    }
}
