import DallyCore
import DallySync
import GRDB

/// Writes a row as the cloud holds it into the replica: a clean row (with its cloud version and
/// no outbox entry) under a new local sequence number, so local long-polls see it like any
/// other change. The objects its `OBJECT` columns reference are recorded, refs kept and
/// downloads queued in the same transaction (``RowObjects``).
enum CloudRowWriter {
    /// - Parameters:
    ///   - columns: the local position of each of `row.values`, nil for a column the replica
    ///     does not have; local columns not listed keep their value (or stay null on a new row).
    static func write(
        _ row: ChangePage.ChangedRow, columns: [Int?], table: TableSQL, old: StoredRow?, db: Database,
        context: inout CommitContext
    ) throws {
        let schema = table.schema
        var values = old.flatMap { $0.deleted ? nil : $0.values } ?? Array(repeating: .null, count: schema.columns.count)
        if row.deleted {
            values = Array(repeating: .null, count: schema.columns.count)
        } else {
            for (json, position) in zip(row.values, columns) {
                guard let position else { continue }
                // A value the replica's type cannot hold (the two configurations disagree) is
                // left as it was rather than failing the whole page, and counted: a local write
                // to the row would send the value it kept over the cloud's.
                if let value = try? Value(wire: json, for: schema.columns[position]) {
                    values[position] = value
                } else {
                    context.noteNotHeld(schema.name, column: schema.columns[position].name)
                }
            }
        }
        let hasObjects = RowObjects.hasObjects(schema)
        let refs = hasObjects ? RowObjects.references(&values, schema: schema) : []
        let seq = context.nextSeq(for: schema.name)
        var arguments: [DatabaseValue] = [
            row.id.databaseValue, seq.databaseValue, row.updatedAt.databaseValue, (row.deleted ? 1 : 0).databaseValue,
            row.version.databaseValue,
        ]
        for value in values { arguments.append(RowDecoding.databaseValue(value)) }
        try db.cachedStatement(sql: table.upsert).execute(values: arguments)
        if hasObjects { try RowObjects.trackDownstream(refs, table: schema, rowID: row.id, now: context.now, db: db) }
        // Only a dirty row (version nil) has an outbox entry; downstream rows replace clean ones.
        if let old, old.version == nil {
            try Outbox.remove(table: schema.name, rowID: row.id, previousSeq: old.seq, db: db)
        }
        let wasLive = old.map { !$0.deleted } ?? false
        let wasTombstone = old?.deleted ?? false
        context.count(
            schema.name, live: (row.deleted ? 0 : 1) - (wasLive ? 1 : 0),
            tombstones: (row.deleted ? 1 : 0) - (wasTombstone ? 1 : 0))
    }

    /// The local position of each of `names`, nil where the replica has no such column.
    static func positions(of names: [String], in schema: TableSchema) -> [Int?] {
        names.map { schema.columnIndex($0) }
    }

    static func current(_ id: String, table: TableSQL, db: Database) throws -> StoredRow? {
        try Row.fetchOne(db.cachedStatement(sql: table.selectByID), arguments: [id])
            .map { RowDecoding.storedRow($0, schema: table.schema) }
    }
}
