import DallyCore
import GRDB

/// Keeps a table's outbox within its bound (``TableLifecycle``): a write that would add an
/// entry past `max_pending` or `max_pending_bytes` is refused (`reject`), or the table's oldest
/// waiting changes are dropped to make room (`drop_oldest`).
///
/// Only a write that adds an entry is weighed: a write to a row already pending replaces that
/// row's entry, so an outbox at its bound still takes updates of what it holds.
///
/// A dropped change is gone for good, which is why `drop_oldest` suits append-only telemetry:
/// a row the cloud never had is removed from the replica, and a row the cloud had goes back to
/// being clean at the version it was based on (its local values stay until the next change
/// from the cloud). Entries in a batch in flight or parked by a conflict are never dropped.
enum OutboxBound {
    /// The most entries one drop reads at a time.
    static let dropChunk = 64

    static func makeRoom(for table: TableSQL, adding bytes: Int64, db: Database, context: inout CommitContext) throws {
        let schema = table.schema
        let lifecycle = schema.lifecycle
        var (entries, total) = try Outbox.totals(schema.name, db: db)
        guard lifecycle.isFull(rows: entries, bytes: total, adding: bytes) else { return }
        if lifecycle.onFull == .dropOldest {
            var dropped: Int64 = 0
            while lifecycle.isFull(rows: entries, bytes: total, adding: bytes) {
                let victims = try Row.fetchAll(
                    db.cachedStatement(sql: """
                        SELECT row_id, base_version, bytes FROM dally_outbox o INDEXED BY \(table.outboxAgeIndex)
                        WHERE \(table.outboxEntries) AND o.parked IS NULL
                            AND o.row_id NOT IN (\(FlightSections.flyingIDs(table: "?1")))
                        ORDER BY first_dirty_at LIMIT ?2
                        """),
                    arguments: [schema.name, dropChunk])
                guard !victims.isEmpty else { break }
                for victim in victims where lifecycle.isFull(rows: entries, bytes: total, adding: bytes) {
                    try drop(rowID: victim[0], baseVersion: victim[1], table: schema, db: db, context: &context)
                    entries -= 1
                    total -= victim[2]
                    dropped += 1
                }
            }
            if dropped > 0 { try LifecycleLedger.add(schema.name, droppedOnFull: dropped, db: db) }
            guard lifecycle.isFull(rows: entries, bytes: total, adding: bytes) else { return }
        }
        throw DallyError(
            .insufficientStorage,
            "table '\(schema.name)' has \(entries) changes (\(ByteCount.words(Int(total)))) waiting for the cloud, "
                + "its bound (\(describe(lifecycle))); the write was not saved. It is taken again once the cloud "
                + "accepts some: check the uplinks, or raise the bound, or set on_full = \"drop_oldest\"")
    }

    private static func describe(_ lifecycle: TableLifecycle) -> String {
        var parts: [String] = []
        if let rows = lifecycle.maxPendingRows { parts.append("max_pending = \(rows)") }
        if let bytes = lifecycle.maxPendingBytes { parts.append("max_pending_bytes = \(bytes)") }
        return parts.joined(separator: ", ")
    }

    private static func drop(
        rowID: String, baseVersion: Int64?, table schema: TableSchema, db: Database, context: inout CommitContext
    ) throws {
        let sqlTable = TableSQL.quote("t_\(schema.name)")
        // Victims are chosen among the entries not in flight.
        try Outbox.remove(table: schema.name, rowID: rowID, mayBeInFlight: false, db: db)
        if let baseVersion {
            try db.execute(sql: "UPDATE \(sqlTable) SET version = ? WHERE id = ?", arguments: [baseVersion, rowID])
            return
        }
        let deleted = try Bool.fetchOne(db, sql: "SELECT deleted FROM \(sqlTable) WHERE id = ?", arguments: [rowID])
        try db.execute(sql: "DELETE FROM \(sqlTable) WHERE id = ?", arguments: [rowID])
        try db.execute(sql: "DELETE FROM dally_object_refs WHERE tbl = ? AND row_id = ?", arguments: [schema.name, rowID])
        if let deleted { context.count(schema.name, live: deleted ? 0 : -1, tombstones: deleted ? -1 : 0) }
    }
}
