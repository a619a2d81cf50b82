import DallyCore
import DallyObjects
import DallySync
import GRDB

/// Applies one batch inside the cloud's write transaction: per change, the conflict rule
/// against the current row, a new version from the table's counter, and a result.
///
/// Nothing a single change does can fail the batch: a change that cannot be applied becomes a
/// `rejected` result and the rest go on. Only storage errors abort (and roll back) the whole.
///
/// In a table with `atomic_sync`, a put whose OBJECT columns reference an object the cloud
/// does not hold complete is refused (`unknown_object`): a reader of the cloud must never see
/// such a row before its object. The check runs in the batch's transaction, which object
/// collection's deletions cannot interleave with, and once the row is in, it references the
/// object and keeps it.
struct BatchApplier {
    let batch: BatchRequest
    let tables: [String: CloudTableSQL]
    /// Table versions as of the start of the transaction; advanced as changes are applied.
    var versions: [String: Int64]
    /// Tables whose version this batch advanced.
    private(set) var touched: Set<String> = []

    init(batch: BatchRequest, tables: [String: CloudTableSQL], versions: [String: Int64]) {
        self.batch = batch
        self.tables = tables
        self.versions = versions
    }

    mutating func apply(db: Database) throws -> [BatchAnswer.SectionResult] {
        var results: [BatchAnswer.SectionResult] = []
        results.reserveCapacity(batch.sections.count)
        for section in batch.sections {
            results.append(BatchAnswer.SectionResult(table: section.table, rows: try apply(section, db: db)))
        }
        for table in touched {
            try db.execute(
                sql: "INSERT INTO cloud_tables (tbl, version) VALUES (?, ?) ON CONFLICT(tbl) DO UPDATE SET version = excluded.version",
                arguments: [table, versions[table] ?? 0])
        }
        return results
    }

    private mutating func apply(_ section: BatchRequest.Section, db: Database) throws -> [BatchAnswer.RowResult] {
        guard let table = tables[section.table] else {
            return rejectAll(section, DallyError(.unknownTable, "the cloud has no table '\(section.table)'"))
        }
        var positions: [Int] = []
        for name in section.columns {
            guard let position = table.schema.columnIndex(name) else {
                return rejectAll(
                    section,
                    DallyError(.unknownColumn, "the cloud's table '\(section.table)' has no column '\(name)'", field: name))
            }
            positions.append(position)
        }
        let columns = positions.map { table.schema.columns[$0] }
        let select = try db.cachedStatement(sql: table.selectCurrent)
        let upsert = try db.cachedStatement(sql: table.upsert(columns: positions))
        let delete = try db.cachedStatement(sql: table.delete)
        let objectHeld = try db.cachedStatement(sql: SQLiteCloudStore.selectObjectHeld)
        let checksObjects = table.schema.policy.atomicSync && columns.contains { $0.type == .object }
        var version = versions[section.table] ?? 0
        defer { versions[section.table] = version }

        let origin = batch.origin
        var results: [BatchAnswer.RowResult] = []
        results.reserveCapacity(section.changes.count)
        var arguments: [DatabaseValue] = []
        var references: [(column: String, reference: ObjectReference)] = []
        for change in section.changes {
            guard Identifier.isValidRowID(change.id) else {
                results.append(.rejected(id: change.id, .init(DallyError(.invalidID, "'\(change.id)' is not a valid row id"))))
                continue
            }
            arguments.removeAll(keepingCapacity: true)
            references.removeAll(keepingCapacity: true)
            arguments.append(change.id.databaseValue)
            arguments.append(.null)  // version, set once decided
            arguments.append(change.updatedAt.databaseValue)
            if change.deleted {
                arguments.append(origin.databaseValue)
                arguments.append(batch.batchID.databaseValue)
            } else {
                arguments.append(0.databaseValue)
                arguments.append(origin.databaseValue)
                arguments.append(batch.batchID.databaseValue)
                do {
                    for (value, column) in zip(change.values, columns) {
                        let decoded = try Value(wire: value, for: column)
                        if checksObjects, column.type == .object, let reference = decoded.objectReference {
                            references.append((column.name, reference))
                        }
                        arguments.append(RowDecoding.databaseValue(decoded))
                    }
                } catch {
                    results.append(.rejected(id: change.id, .init(error)))
                    continue
                }
            }

            let current = try Row.fetchOne(select, arguments: [change.id])
            // The same change, retried after its batch's answer was forgotten.
            if let current, (current[3] as String) == origin, (current[4] as String) == batch.batchID {
                results.append(.accepted(id: change.id, version: current[0]))
                continue
            }
            if let absent = try references.first(where: { !(try Self.isHeld($0.reference, objectHeld)) }) {
                let error = DallyError(
                    .unknownObject,
                    "the cloud holds no complete object \(absent.reference.hash.hex); upload its chunks and manifest first",
                    field: absent.column)
                results.append(.rejected(id: change.id, .init(error)))
                continue
            }
            var decision = ConflictRule.Decision.apply
            if let current {
                let currentVersion: Int64 = current[0]
                decision = ConflictRule.decide(
                    policy: table.schema.conflict, baseVersion: change.baseVersion, updatedAt: change.updatedAt,
                    current: .init(version: currentVersion, updatedAt: current[1]))
            }
            switch decision {
            case .apply:
                version += 1
                arguments[1] = version.databaseValue
                try (change.deleted ? delete : upsert).execute(arguments: StatementArguments(arguments))
                results.append(.accepted(id: change.id, version: version))
            case .conflict(let winner):
                let server = try serverRow(change.id, table: table, positions: positions, db: db)
                if winner == .client {
                    version += 1
                    arguments[1] = version.databaseValue
                    try (change.deleted ? delete : upsert).execute(arguments: StatementArguments(arguments))
                }
                let conflict = BatchAnswer.Conflict(
                    policy: table.schema.conflict, winner: winner, version: winner == .client ? version : server.version,
                    server: server)
                results.append(.conflict(id: change.id, conflict))
            }
        }
        if version != versions[section.table] ?? 0 { touched.insert(section.table) }
        return results
    }

    /// Whether the cloud holds the referenced object complete.
    private static func isHeld(_ reference: ObjectReference, _ statement: Statement) throws -> Bool {
        try Bool.fetchOne(statement, arguments: [reference.hash.hex]) != nil
    }

    /// The cloud's current row, values in the section's column order.
    private func serverRow(_ id: String, table: CloudTableSQL, positions: [Int], db: Database) throws
        -> ChangePage.ChangedRow
    {
        let select = try db.cachedStatement(sql: table.selectValues(columns: positions))
        guard let row = try Row.fetchOne(select, arguments: [id]) else {
            throw StoreError("row '\(id)' vanished during its own transaction")
        }
        let deleted = (row[2] as Int64) != 0
        var values: [JSONValue] = []
        if !deleted {
            for (i, position) in positions.enumerated() {
                values.append(RowDecoding.value(row[3 + i], type: table.schema.columns[position].type).wireJSON)
            }
        }
        return ChangePage.ChangedRow(id: id, version: row[0], updatedAt: row[1], deleted: deleted, values: values)
    }

    private func rejectAll(_ section: BatchRequest.Section, _ error: DallyError) -> [BatchAnswer.RowResult] {
        let rejection = BatchAnswer.RowRejection(error)
        return section.changes.map { .rejected(id: $0.id, rejection) }
    }
}
