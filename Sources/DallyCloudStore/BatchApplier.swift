import DallyCore
import DallyObjects
import DallySync
import DallyStore
import GRDB
import GRDBSQLite

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
    /// The batch's origin, spelled once: each change is ruled and written with it.
    let origin: String
    let tables: [String: CloudTableSQL]
    /// Table versions as of the start of the transaction; advanced as changes are applied.
    var versions: [String: Int64]
    /// Tables whose version this batch advanced.
    private(set) var touched: Set<String> = []

    init(batch: BatchRequest, tables: [String: CloudTableSQL], versions: [String: Int64]) {
        self.batch = batch
        origin = batch.origin
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
        guard let table = tables[section.table] else { return section.rejectAll(section.unknownTable) }
        let layout: SectionLayout
        switch section.layout(in: table.schema) {
        case .success(let found): layout = found
        case .failure(let error): return section.rejectAll(error)
        }
        let positions = layout.positions
        let statements = Statements(
            current: try db.cachedStatement(sql: table.selectCurrent),
            upsert: try db.cachedStatement(sql: table.upsert(columns: positions)),
            delete: try db.cachedStatement(sql: table.delete),
            objectHeld: try db.cachedStatement(sql: SQLiteCloudStore.selectObjectHeld))
        var version = versions[section.table] ?? 0
        defer { versions[section.table] = version }

        var results: [BatchAnswer.RowResult] = []
        results.reserveCapacity(section.changes.count)
        for change in section.changes {
            let decoded: DecodedChange
            switch DecodedChange.decode(change, columns: layout.columns, collectingObjects: layout.checksObjects) {
            case .success(let value): decoded = value
            case .failure(let error):
                results.append(.rejected(id: change.id, .init(error)))
                continue
            }
            let current = try CurrentRow.fetch(change.id, with: statements.current)
            let absent = try decoded.references.first { !(try Self.isHeld($0.reference, statements.objectHeld)) }
            let ruling = ChangeRuling.rule(
                change, origin: origin, batchID: batch.batchID, policy: table.schema.conflict, current: current,
                absentObject: absent)
            switch ruling {
            case .alreadyApplied(let stored):
                results.append(.accepted(id: change.id, version: stored))
            case .rejected(let error):
                results.append(.rejected(id: change.id, .init(error)))
            case .write:
                version += 1
                try write(decoded, version: version, table: table, statements: statements)
                results.append(.accepted(id: change.id, version: version))
            case .conflict(let winner):
                let server = try serverRow(change.id, table: table, positions: positions, db: db)
                if winner == .client {
                    version += 1
                    try write(decoded, version: version, table: table, statements: statements)
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

    /// The statements one section uses, prepared once for all its changes.
    private struct Statements {
        let current: Statement
        let upsert: Statement
        let delete: Statement
        let objectHeld: Statement
    }

    /// Reads the cloud's row as the ruling needs it.
    private enum CurrentRow {
        static func fetch(_ id: String, with statement: Statement) throws -> ChangeRuling.Current? {
            // By position (`CloudTableSQL.selectCurrent`), by SQLite's own calls: once a change,
            // and GRDB's row cost far more than the search (`Statement.readFirstRow`).
            try statement.bind(values: [id.databaseValue])
            return try statement.readFirstRow { row in
                ChangeRuling.Current(
                    version: sqlite3_column_int64(row, 0), updatedAt: sqlite3_column_int64(row, 1),
                    origin: Statement.text(row, at: 3), batch: Statement.text(row, at: 4))
            }
        }
    }

    /// Stores the change at `version`, written by this batch.
    private func write(_ decoded: DecodedChange, version: Int64, table: CloudTableSQL, statements: Statements) throws {
        let change = decoded.change
        let arguments = table.writeArguments(
            id: change.id, version: version, updatedAt: change.updatedAt, deleted: change.deleted, origin: origin,
            batch: batch.batchID, values: decoded.values.map(RowDecoding.databaseValue))
        try (change.deleted ? statements.delete : statements.upsert).execute(values: arguments)
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
        let deleted = (row["deleted"] as Int64) != 0
        var values: [JSONValue] = []
        if !deleted {
            // The selected columns follow version, updated_at and deleted, in `positions` order.
            for (i, position) in positions.enumerated() {
                values.append(RowDecoding.value(row[3 + i], type: table.schema.columns[position].type).wireJSON)
            }
        }
        return ChangePage.ChangedRow(
            id: id, version: row["version"], updatedAt: row["updated_at"], deleted: deleted, values: values)
    }
}
