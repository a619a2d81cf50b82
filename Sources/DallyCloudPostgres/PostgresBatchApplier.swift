import DallyCore
import DallyObjects
import DallySync
import Logging
import PostgresNIO

/// Applies one batch inside its transaction on PostgreSQL, in two steps around the lock on its
/// tables' counters.
///
/// 1. ``rule(counters:on:)``, before the lock: per table, the rows the batch names read in one
///    query (and the objects it references, locked `FOR SHARE`), and a ``SectionPlan`` per
///    section: what each change will do.
/// 2. ``apply(locked:on:)``, once the caller holds the counter rows (`cloud_tables … FOR
///    UPDATE`): rows read again only if the table moved since step 1, then each write takes the
///    next version and the writes go as one statement per kind, each column an array
///    (``PostgresColumnArray``).
///
/// Versions stay gap-free in commit order across nodes because, from the lock until this
/// transaction ends, no other one can take a version of those tables or write their rows, so
/// a version becomes visible only after every smaller one has committed. The rows step 1 read
/// may have changed before the lock, but only through another batch (which raised the
/// counter) or a tombstone purge (which raised the horizon; both hold the same lock): when
/// neither moved, nothing did, and when the counter moved the rows that changed are exactly
/// those with a version after the one step 1 saw, so only the batch's rows among them are read
/// again, and their sections ruled again. A conflict is therefore decided on the rows as they
/// are at the lock, as if everything had run under it. Nothing a single change does can fail
/// the batch; only database errors abort (and roll back) the whole.
struct PostgresBatchApplier {
    let batch: BatchRequest
    /// The locked counters of the tables this batch writes; advanced as changes are applied.
    var versions: [String: Int64] = [:]
    let logger: Logger
    /// Each section's layout and changes, decoded when the applier is made: before the batch's
    /// transaction, so that batches applied one after another on a table do not wait for each
    /// other's decoding too.
    private let prepared: [Result<PreparedSection, DallyError>]
    /// The tables of the sections that were not refused whole, by name.
    private let written: [String: PostgresTableSQL]
    /// Per table: the counter as step 1 saw it and the rows the batch names, as read then.
    private var reads: [String: TableRead] = [:]
    /// The referenced objects the cloud holds complete.
    private var held: Set<ContentHash> = []
    /// Per section (nil for one refused whole), what its changes will do.
    private var plans: [SectionPlan?] = []

    /// A section checked against its table and decoded, ready to meet the table's rows.
    private struct PreparedSection {
        let table: PostgresTableSQL
        let positions: [Int]
        let checksObjects: Bool
        let decoded: [Result<DecodedChange, DallyError>]
    }

    /// A table's counter row: its version, and the horizon a tombstone purge raises.
    struct Counter: Equatable, Sendable {
        let version: Int64
        let horizon: Int64
    }

    private struct TableRead {
        let counter: Counter
        var rows: [String: SectionPlan.Row]
    }

    /// The most versions a table may have moved between the two steps for only the rows that
    /// changed to be read again; beyond it, every row the batch names is.
    static let rereadLimit: Int64 = 50_000

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
        var written: [String: PostgresTableSQL] = [:]
        for case .success(let section) in prepared { written[section.table.schema.name] = section.table }
        self.written = written
    }

    /// The tables the batch may write, in name order: the order their counters are locked in,
    /// so that two batches never wait on each other in a cycle.
    var writtenTables: [String] { written.keys.sorted() }

    /// The counter rows of `tables`, locked until the transaction ends when `locking`.
    static func counters(_ tables: [String], locking: Bool, on connection: PostgresConnection, logger: Logger)
        async throws -> [String: Counter]
    {
        guard !tables.isEmpty else { return [:] }
        var binds = PostgresBindings()
        binds.append(tables)
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "SELECT tbl, version, horizon FROM cloud_tables WHERE tbl = ANY($1) ORDER BY tbl"
                    + (locking ? " FOR UPDATE" : ""),
                binds: binds),
            logger: logger)
        var counters: [String: Counter] = [:]
        for try await (table, version, horizon) in rows.decode((String, Int64, Int64).self) {
            counters[table] = Counter(version: version, horizon: horizon)
        }
        return counters
    }

    /// Step 1: reads the rows and objects the batch names and rules on every section, the
    /// tables' `counters` having been read just before (unlocked).
    mutating func rule(counters: [String: Counter], on connection: PostgresConnection) async throws {
        var hashes: Set<String> = []
        for case .success(let section) in prepared where section.checksObjects {
            for case .success(let change) in section.decoded {
                for use in change.references { hashes.insert(use.reference.hash.hex) }
            }
        }
        held = try await heldObjects(hashes, on: connection)
        for table in writtenTables {
            guard let counter = counters[table] else { continue }
            let rows = try await currentRows(table, ids: ids(of: table), on: connection)
            reads[table] = TableRead(counter: counter, rows: rows)
        }
        plans = prepared.map { _ in nil }
        for table in writtenTables { plan(table) }
    }

    /// Step 2: applies the batch, `locked` being the counters the caller locked.
    mutating func apply(locked: [String: Counter], on connection: PostgresConnection) async throws
        -> [BatchAnswer.SectionResult]
    {
        for table in writtenTables {
            guard let read = reads[table], let now = locked[table], now != read.counter else { continue }
            try await reread(table, from: read, to: now, on: connection)
        }
        versions = locked.mapValues(\.version)
        var writeVersions: [String: [Int64]] = [:]
        var results: [BatchAnswer.SectionResult] = []
        results.reserveCapacity(batch.sections.count)
        for (index, (section, prepared)) in zip(batch.sections, prepared).enumerated() {
            let rows: [BatchAnswer.RowResult]
            switch prepared {
            case .failure(let error):
                rows = section.rejectAll(error)
            case .success(let ready):
                guard let plan = plans[index] else {
                    throw DallyError(.storage, "the counter of table '\(section.table)' is missing; restart the node to recreate it")
                }
                let policy = ready.table.schema.conflict
                var version = versions[section.table] ?? 0
                var written = writeVersions[section.table] ?? []
                let (sectionRows, writes) = plan.assign(policy: policy, version: &version, writeVersions: &written)
                try await flush(writes, table: ready.table, positions: ready.positions, on: connection)
                versions[section.table] = version
                writeVersions[section.table] = written
                rows = sectionRows
            }
            results.append(BatchAnswer.SectionResult(table: section.table, rows: rows))
        }
        return results
    }

    /// Every id the batch's sections of `table` name in a change that decoded. A change that did
    /// not is refused without its row (an id PostgreSQL cannot even compare, one with U+0000,
    /// is among them: asked for, it failed the whole batch with `500 storage`).
    private func ids(of table: String) -> [String] {
        var ids: [String] = []
        for (section, prepared) in zip(batch.sections, prepared) {
            guard case .success(let ready) = prepared, ready.table.schema.name == table else { continue }
            for (change, decoded) in zip(section.changes, ready.decoded) {
                if case .success = decoded { ids.append(change.id) }
            }
        }
        return ids
    }

    /// Rules on the sections of `table`, in order, against the rows read for it.
    private mutating func plan(_ table: String) {
        guard var rows = reads[table]?.rows else { return }
        var writes = 0
        for (index, (section, prepared)) in zip(batch.sections, prepared).enumerated() {
            guard case .success(let ready) = prepared, ready.table.schema.name == table else { continue }
            plans[index] = SectionPlan(
                section, ready.decoded, rows: &rows, writes: &writes, held: held, origin: batch.origin,
                batchID: batch.batchID, policy: ready.table.schema.conflict, positions: ready.positions)
        }
    }

    /// The table moved between the two steps: reads again the batch's rows among those that
    /// changed (all of them after a purge) and rules on its sections again if any did.
    private mutating func reread(_ table: String, from read: TableRead, to now: Counter, on connection: PostgresConnection)
        async throws
    {
        guard let sql = written[table] else { return }
        let named = ids(of: table)
        let changed: [String]
        if now.horizon != read.counter.horizon || now.version < read.counter.version
            || now.version - read.counter.version > Self.rereadLimit
        {
            changed = named
            reads[table]?.rows = [:]
        } else {
            var binds = PostgresBindings()
            binds.append(read.counter.version)
            binds.append(now.version)
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: sql.selectIDsInVersions, binds: binds), logger: logger)
            var moved: Set<String> = []
            for try await id in rows.decode(String.self) { moved.insert(id) }
            changed = named.filter { moved.contains($0) }
        }
        guard !changed.isEmpty else { return }
        let rows = try await currentRows(table, ids: changed, on: connection)
        for (id, row) in rows { reads[table]?.rows[id] = row }
        plan(table)
    }

    private func currentRows(_ table: String, ids: [String], on connection: PostgresConnection) async throws
        -> [String: SectionPlan.Row]
    {
        guard let sql = written[table], !ids.isEmpty
        else { return [:] }
        let columns = sql.schema.columns
        var binds = PostgresBindings()
        binds.append(ids)
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: sql.selectCurrent(columns: Array(columns.indices)), binds: binds), logger: logger)
        var current: [String: SectionPlan.Row] = [:]
        for try await row in rows {
            let cells = row.makeRandomAccess()
            let deleted = try cells[3].decode(Bool.self)
            var values: [JSONValue] = []
            if !deleted {
                values.reserveCapacity(columns.count)
                for (i, column) in columns.enumerated() {
                    values.append(try PostgresValues.value(cells[6 + i], type: column.type).wireJSON)
                }
            }
            let facts = ChangeRuling.Current(
                version: try cells[1].decode(Int64.self), updatedAt: try cells[2].decode(Int64.self),
                origin: try cells[4].decode(String.self), batch: try cells[5].decode(String.self))
            current[try cells[0].decode(String.self)] = SectionPlan.Row(facts: facts, deleted: deleted, values: values)
        }
        return current
    }

    /// Which of the objects the changes reference the cloud holds complete, each locked
    /// (`FOR SHARE`) until this transaction ends: a collection, which locks `cloud_objects`
    /// exclusively, waits until the rows that reference them have committed and then sees them.
    private func heldObjects(_ hashes: Set<String>, on connection: PostgresConnection) async throws -> Set<ContentHash> {
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
    /// the rows one array. Every id appears at most once (a later change of the batch to a row it
    /// writes is ``SectionPlan/Step/writtenBefore(write:id:)``), so
    /// the order between the statements does not matter.
    private func flush(
        _ writes: [SectionPlan.Write], table: PostgresTableSQL, positions: [Int], on connection: PostgresConnection
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
    private func facts(_ writes: [SectionPlan.Write]) -> PostgresBindings {
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
