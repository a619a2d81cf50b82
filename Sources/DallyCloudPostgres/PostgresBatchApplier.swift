import DallyCore
import DallyObjects
import DallySync
import Logging
import PostgresNIO

/// Applies one batch inside its transaction on PostgreSQL: per section, the current rows read
/// in one query, a ``ChangeRuling`` per change, new versions from the table's counter, and the
/// writes sent as one statement per kind, each column an array (``PostgresColumnArray``).
///
/// Versions stay gap-free in commit order across nodes because the caller has locked the
/// counter rows (`cloud_tables … FOR UPDATE`) of every table this batch writes before calling:
/// until this transaction ends no other one can take a version of those tables or write their
/// rows, so the rows read here cannot change underneath, and a version becomes visible only
/// after every smaller one has committed. Nothing a single change does can fail the batch; only
/// database errors abort (and roll back) the whole.
struct PostgresBatchApplier {
    let batch: BatchRequest
    /// The locked counters of the tables this batch writes; advanced as changes are applied.
    var versions: [String: Int64] = [:]
    let logger: Logger
    /// Each section's layout and changes, decoded when the applier is made: before the batch's
    /// transaction locks its tables' counters, so that batches applied one after another on a
    /// table do not wait for each other's decoding too.
    private let prepared: [Result<PreparedSection, DallyError>]

    /// A section checked against its table and decoded, ready to meet the table's rows.
    private struct PreparedSection {
        let table: PostgresTableSQL
        let positions: [Int]
        let checksObjects: Bool
        let decoded: [Result<DecodedChange, DallyError>]
    }

    /// Decodes every section of `batch`; nothing is read or written yet.
    init(batch: BatchRequest, tables: [String: PostgresTableSQL], logger: Logger) {
        self.batch = batch
        self.logger = logger
        prepared = batch.sections.map { section in
            guard let table = tables[section.table] else { return .failure(section.unknownTable) }
            return section.layout(in: table.schema).map { layout in
                PreparedSection(
                    table: table, positions: layout.positions, checksObjects: layout.checksObjects,
                    decoded: section.changes.map {
                        DecodedChange.decode($0, columns: layout.columns, collectingObjects: layout.checksObjects)
                    })
            }
        }
    }

    /// Applies the batch inside its transaction, `versions` being the counters it locked.
    mutating func apply(versions locked: [String: Int64], on connection: PostgresConnection) async throws
        -> [BatchAnswer.SectionResult]
    {
        versions = locked
        var results: [BatchAnswer.SectionResult] = []
        results.reserveCapacity(batch.sections.count)
        for (section, prepared) in zip(batch.sections, prepared) {
            let rows: [BatchAnswer.RowResult]
            switch prepared {
            case .success(let ready): rows = try await apply(section, ready, on: connection)
            case .failure(let error): rows = section.rejectAll(error)
            }
            results.append(BatchAnswer.SectionResult(table: section.table, rows: rows))
        }
        return results
    }

    /// The cloud's row as read at the start of a section (and as this batch left it).
    private struct Current {
        var facts: ChangeRuling.Current
        var deleted: Bool
        /// Values in the section's column order, as they go on the wire.
        var values: [JSONValue]

        func changedRow(id: String) -> ChangePage.ChangedRow {
            ChangePage.ChangedRow(
                id: id, version: facts.version, updatedAt: facts.updatedAt, deleted: deleted,
                values: deleted ? [] : values)
        }
    }

    /// A change to write at `version`.
    private struct Write {
        let decoded: DecodedChange
        let version: Int64
    }

    private mutating func apply(
        _ section: BatchRequest.Section, _ prepared: PreparedSection, on connection: PostgresConnection
    ) async throws -> [BatchAnswer.RowResult] {
        let table = prepared.table
        let positions = prepared.positions
        let decoded = prepared.decoded
        var current = try await currentRows(section, table: table, positions: positions, on: connection)
        let held = prepared.checksObjects ? try await heldObjects(decoded, on: connection) : []

        var version = versions[section.table] ?? 0
        var writes: [Write] = []
        var results: [BatchAnswer.RowResult] = []
        results.reserveCapacity(section.changes.count)
        for (change, outcome) in zip(section.changes, decoded) {
            let decodedChange: DecodedChange
            switch outcome {
            case .success(let value): decodedChange = value
            case .failure(let error):
                results.append(.rejected(id: change.id, .init(error)))
                continue
            }
            let row = current[change.id]
            let absent = decodedChange.references.first { !held.contains($0.reference.hash) }
            let ruling = ChangeRuling.rule(
                change, origin: batch.origin, batchID: batch.batchID, policy: table.schema.conflict,
                current: row?.facts, absentObject: absent)
            switch ruling {
            case .alreadyApplied(let stored):
                results.append(.accepted(id: change.id, version: stored))
            case .rejected(let error):
                results.append(.rejected(id: change.id, .init(error)))
            case .write:
                version += 1
                writes.append(Write(decoded: decodedChange, version: version))
                current[change.id] = written(decodedChange, version: version, over: row)
                results.append(.accepted(id: change.id, version: version))
            case .conflict(let winner):
                // `row` is set: the rule only finds a conflict with an existing row.
                let server = row?.changedRow(id: change.id)
                    ?? ChangePage.ChangedRow(id: change.id, version: 0, updatedAt: 0, deleted: true, values: [])
                if winner == .client {
                    version += 1
                    writes.append(Write(decoded: decodedChange, version: version))
                    current[change.id] = written(decodedChange, version: version, over: row)
                }
                let conflict = BatchAnswer.Conflict(
                    policy: table.schema.conflict, winner: winner, version: winner == .client ? version : server.version,
                    server: server)
                results.append(.conflict(id: change.id, conflict))
            }
        }
        try await flush(writes, table: table, positions: positions, on: connection)
        versions[section.table] = version
        return results
    }

    /// The row as this batch leaves it, for later changes of the same batch to the same id
    /// (which the ruling then answers as already applied, as the SQLite store does).
    private func written(_ decoded: DecodedChange, version: Int64, over row: Current?) -> Current {
        let change = decoded.change
        return Current(
            facts: .init(version: version, updatedAt: change.updatedAt, origin: batch.origin, batch: batch.batchID),
            deleted: change.deleted, values: decoded.values.map(\.wireJSON))
    }

    private func currentRows(
        _ section: BatchRequest.Section, table: PostgresTableSQL, positions: [Int], on connection: PostgresConnection
    ) async throws -> [String: Current] {
        var binds = PostgresBindings()
        binds.append(section.changes.map(\.id))
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: table.selectCurrent(columns: positions), binds: binds), logger: logger)
        var current: [String: Current] = [:]
        for try await row in rows {
            let cells = row.makeRandomAccess()
            let deleted = try cells[3].decode(Bool.self)
            var values: [JSONValue] = []
            if !deleted {
                values.reserveCapacity(positions.count)
                for (i, position) in positions.enumerated() {
                    values.append(
                        try PostgresValues.value(cells[6 + i], type: table.schema.columns[position].type).wireJSON)
                }
            }
            let facts = ChangeRuling.Current(
                version: try cells[1].decode(Int64.self), updatedAt: try cells[2].decode(Int64.self),
                origin: try cells[4].decode(String.self), batch: try cells[5].decode(String.self))
            current[try cells[0].decode(String.self)] = Current(facts: facts, deleted: deleted, values: values)
        }
        return current
    }

    /// Which of the objects the changes reference the cloud holds complete, each locked
    /// (`FOR SHARE`) until this transaction ends: a collection, which locks `cloud_objects`
    /// exclusively, waits until the rows that reference them have committed and then sees them.
    private func heldObjects(_ decoded: [Result<DecodedChange, DallyError>], on connection: PostgresConnection)
        async throws -> Set<ContentHash>
    {
        var hashes: Set<String> = []
        for case .success(let change) in decoded {
            for use in change.references { hashes.insert(use.reference.hash.hex) }
        }
        guard !hashes.isEmpty else { return [] }
        var binds = PostgresBindings()
        binds.append(hashes.sorted())
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT hash FROM cloud_objects WHERE hash = ANY($1) ORDER BY hash FOR SHARE", binds: binds),
            logger: logger)
        var held: Set<ContentHash> = []
        for try await hex in rows.decode(String.self) {
            if let hash = ContentHash(hex: hex) { held.insert(hash) }
        }
        return held
    }

    /// Sends the writes as two statements at most, puts and tombstones apart, each column of
    /// the rows one array. Every id appears at most once (see ``written(_:version:over:)``), so
    /// the order between the statements does not matter.
    private func flush(
        _ writes: [Write], table: PostgresTableSQL, positions: [Int], on connection: PostgresConnection
    ) async throws {
        let puts = writes.filter { !$0.decoded.change.deleted }
        if !puts.isEmpty {
            var binds = facts(puts)
            for (i, position) in positions.enumerated() {
                var column = PostgresColumnArray(table.schema.columns[position].type)
                for write in puts { column.append(write.decoded.values[i]) }
                binds.append(column)
            }
            try await connection.query(PostgresQuery(unsafeSQL: table.upsert(columns: positions), binds: binds), logger: logger)
        }
        let deletes = writes.filter { $0.decoded.change.deleted }
        if !deletes.isEmpty {
            try await connection.query(PostgresQuery(unsafeSQL: table.delete, binds: facts(deletes)), logger: logger)
        }
    }

    /// The binds every write statement starts with: ids, versions and updated_at as arrays,
    /// then the batch's origin and id.
    private func facts(_ writes: [Write]) -> PostgresBindings {
        var ids = PostgresColumnArray(of: .text)
        var versions = PostgresColumnArray(of: .bigint)
        var updated = PostgresColumnArray(of: .bigint)
        for write in writes {
            ids.append(write.decoded.change.id)
            versions.append(write.version)
            updated.append(write.decoded.change.updatedAt)
        }
        var binds = PostgresBindings(capacity: 5 + (writes.first?.decoded.values.count ?? 0))
        binds.append(ids)
        binds.append(versions)
        binds.append(updated)
        binds.append(batch.origin)
        binds.append(batch.batchID)
        return binds
    }
}
