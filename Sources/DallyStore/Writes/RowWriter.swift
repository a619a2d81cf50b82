import DallyCore
import GRDB

/// Applies one validated ``RowWrite`` inside a transaction: checks the expected sequence,
/// resolves the objects its `OBJECT` columns name, writes the row with a new local sequence
/// number, and records it in the outbox (and its object refs and uploads, see ``RowObjects``).
///
/// All checks run before the first statement that changes anything, so a refused write
/// leaves the database as it was.
enum RowWriter {
    /// The result of a write: the row as now stored, and whether anything changed (deleting a
    /// tombstone again changes nothing).
    struct Outcome: Sendable {
        let row: StoredRow
        let changed: Bool
    }

    static func apply(
        _ write: RowWrite,
        table: TableSQL,
        db: Database,
        context: inout CommitContext
    ) throws -> Outcome {
        let schema = table.schema
        let select = try db.cachedStatement(sql: table.selectByID)
        try select.bind(values: [write.id.databaseValue])
        let old = try Row.fetchOne(select).map { RowDecoding.storedRow($0, schema: schema) }
        let liveOld = old.flatMap { $0.deleted ? nil : $0 }
        if let scope = write.clientScope, let liveOld {
            // Before any check that could describe the row: outside the token's scope it is
            // answered as missing, or, for a PUT that would replace it, refused without detail.
            try ClientScopeCheck.requireHeld(liveOld, scope: scope, kind: write.kind, schema: schema)
        }

        if write.requiresExisting, liveOld == nil {
            throw DallyError(
                .versionMismatch, "row '\(write.id)' does not exist (If-Match: * writes only a row that does)",
                field: "If-Match", current: old)
        }
        if let expected = write.expectedSeq {
            if expected == 0, let liveOld {
                throw DallyError(
                    .versionMismatch, "row '\(write.id)' already exists (expected_seq 0 means: create only)",
                    field: "expected_seq", current: liveOld)
            }
            if expected != 0, old?.seq != expected {
                let now = old.map { "its seq is \($0.seq)" } ?? "it does not exist"
                throw DallyError(
                    .versionMismatch, "row '\(write.id)' has changed: expected seq \(expected), but \(now)",
                    field: "expected_seq", current: old)
            }
        }

        var values: [Value]
        var deleted = false
        switch write.kind {
        case .put:
            values = Array(repeating: .null, count: schema.columns.count)
            for (index, value) in write.values { values[index] = value }
        case .patch:
            guard let liveOld else {
                throw DallyError(.notFound, "row '\(write.id)' does not exist in '\(schema.name)'; use PUT to create it")
            }
            values = liveOld.values
            for (index, value) in write.values { values[index] = value }
        case .delete:
            guard let old else { throw DallyError(.notFound, "row '\(write.id)' does not exist in '\(schema.name)'") }
            if old.deleted { return Outcome(row: old, changed: false) }
            values = Array(repeating: .null, count: schema.columns.count)
            deleted = true
        }

        if let scope = write.clientScope, !deleted {
            try ClientScopeCheck.requireWritten(values, scope: scope, id: write.id, schema: schema)
        }
        if let scope = table.writeScope {
            try ScopeCheck.require(scope, old: liveOld, new: deleted ? nil : values, id: write.id, schema: schema)
        }

        let hasObjects = RowObjects.hasObjects(schema)
        if hasObjects {
            for (index, _) in write.values where schema.columns[index].type == .object {
                values[index] = try RowObjects.resolve(values[index], column: schema.columns[index], db: db)
            }
        }

        let coalesced = old != nil && old?.version == nil
        let bytes = Outbox.estimatedBytes(id: write.id, values: deleted ? [] : values)
        if !schema.policy.localOnly, !coalesced, schema.lifecycle.isBounded {
            try OutboxBound.makeRoom(for: table, adding: Int64(bytes), db: db, context: &context)
        }

        let seq = context.nextSeq(for: schema.name)
        let updatedAt = write.updatedAt ?? context.now
        var arguments: [DatabaseValue] = [
            write.id.databaseValue, seq.databaseValue, updatedAt.databaseValue, (deleted ? 1 : 0).databaseValue,
            .null,
        ]
        arguments.reserveCapacity(5 + values.count)
        for value in values { arguments.append(RowDecoding.databaseValue(value)) }
        try db.cachedStatement(sql: table.upsert).execute(values: arguments)
        if hasObjects {
            let refs = RowObjects.references(&values, schema: schema)
            try RowObjects.trackLocal(refs, table: schema, rowID: write.id, now: context.now, db: db)
        }

        if !schema.policy.localOnly {
            try Outbox.record(
                table: schema.name, rowID: write.id, baseVersion: old?.version, coalesced: coalesced,
                previousSeq: old?.seq, bytes: bytes, db: db, context: &context)
        }
        context.count(
            schema.name,
            live: (deleted ? 0 : 1) - (liveOld == nil ? 0 : 1),
            tombstones: (deleted ? 1 : 0) - (old?.deleted == true ? 1 : 0),
            writes: 1
        )
        let row = StoredRow(
            id: write.id, seq: seq, updatedAt: updatedAt, deleted: deleted, version: nil, values: values)
        return Outcome(row: row, changed: true)
    }
}
