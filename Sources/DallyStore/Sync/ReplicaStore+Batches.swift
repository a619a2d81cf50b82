import DallyCore
import DallySync
import Foundation
import GRDB
import GRDBSQLite

extension ReplicaStore {
    /// The scopes of the replicated tables, as downstream requests carry them (PROTOCOL.md §7.4).
    public var scopes: TableScopes {
        TableScopes.declared(in: tables.values.map(\.schema).filter { !$0.policy.localOnly })
    }
}

extension ReplicaStore {
    /// The batch to send next within `scope`, or nil when nothing is pending there.
    ///
    /// A batch in flight that fits the scope (sent before, answer not applied, perhaps before
    /// a restart) comes first and unchanged: same id, same body, so the cloud recognises the
    /// retry. Otherwise a new batch is built from the outbox entries the scope allows that are
    /// neither parked nor in another batch in flight, in id order from where the last one
    /// stopped, and recorded as in flight, a section per table with the ids it carries and the
    /// highest local sequence number its tables held (``FlightSections``), before it is
    /// returned, so that nothing leaves the box that the replica does not remember sending. Its
    /// `since` names the tables the scope lets come down.
    ///
    /// The batch is read and encoded on a reader (WAL snapshot), off SQLite's writer; only its
    /// record goes through the writer, in the sync lane, a row per table. A row written
    /// between the two steps takes a sequence number above the batch's highest, so its answer
    /// keeps the newer state pending (``AnswerApplier``), as for a write while the batch flies.
    ///
    /// `excluding` names batches in flight not to resend: ones the caller has sent and is
    /// applying the answer of while it builds the next (a pipelined drain).
    public func nextBatch(
        gateway: String, maxRows: Int, scope: BatchScope = .everything, excluding: Set<String> = []
    ) async throws -> OutgoingBatch? {
        try await nextBatch(gateway: gateway, maxRows: maxRows, scope: scope, excluding: excluding, planned: nil)
    }

    /// ``nextBatch(gateway:maxRows:scope:excluding:)``, running `planned` between each plan
    /// and its record (a test's writes, made there).
    func nextBatch(
        gateway: String, maxRows: Int, scope: BatchScope, excluding: Set<String>,
        planned: (@Sendable () async throws -> Void)?
    ) async throws -> OutgoingBatch? {
        while true {
            switch try await planBatch(gateway: gateway, maxRows: maxRows, scope: scope, excluding: excluding) {
            case nil:
                return nil
            case .resend(let batch):
                return batch
            case .new(var plan):
                try await planned?()
                recording: while true {
                    switch try await record(plan) {
                    case .recorded:
                        return plan.batch
                    case .clashed:
                        // Another batch claimed some of these rows meanwhile: read the outbox again.
                        break recording
                    case .dropped(let rows, let counts):
                        guard let trimmed = try plan.leavingOut(rows, droppedCounts: counts) else { break recording }
                        plan = trimmed
                    }
                }
            }
        }
    }

    /// What ``nextBatch(gateway:maxRows:scope:)`` found on the reader.
    private enum BatchPlan: Sendable {
        case resend(OutgoingBatch)
        case new(NewBatch)
    }

    private func planBatch(gateway: String, maxRows: Int, scope: BatchScope, excluding: Set<String>) async throws
        -> BatchPlan?
    {
        let tables = self.tables
        let replicaID = self.replicaID
        let createdAt = now()
        let cursors = sendCursors.withLock { $0 }
        let plan = try await pool.read { db -> (BatchPlan, [String: String])? in
            let flights = try Self.inFlight(db: db)
            for flight in flights where scope.fits(flight) && !excluding.contains(flight.batchID) {
                guard let kept = try Data.fetchOne(
                    db, sql: "SELECT body FROM dally_inflight WHERE batch = ?", arguments: [flight.batchID])
                else { continue }
                var body = try KeptBody.unpacked(Array(kept))
                let rows = try FlightSections.rowsLeft(batch: flight.batchID, db: db)
                // A resend (after a restart, or a failed attempt) is rare: its outline is read
                // from the body it keeps.
                let document = try JSONParser.parse(body)
                let outline = try BatchOutline.read(document)
                if case .string(let named)? = document["gateway"], named != gateway {
                    // The configuration names this gateway otherwise since the batch left, and
                    // the cloud refuses a batch naming another gateway than its credentials, at
                    // every resend. It goes under the id it has now: the cloud knows its rows by
                    // replica and batch, so none applies twice.
                    var request = try BatchRequest.decode(document, maxRows: Int.max)
                    request.gateway = gateway
                    body = request.encode()
                }
                return (
                    .resend(
                        OutgoingBatch(
                            batchID: flight.batchID, body: body, rows: rows, resent: true, uploads: flight.uploads,
                            pulls: flight.pulls, outline: outline)), [:]
                )
            }
            var sections: [BatchSectionWriter] = []
            var planned: [PlannedSection] = []
            var highestSeq: Int64 = 0
            var budget = maxRows
            var reached: [String: String] = [:]
            // From the running totals, not the outbox: DISTINCT over the outbox walks all of it
            // (a table with only parked rows yields an empty section below and is skipped).
            let pendingTables = try String.fetchAll(
                db, sql: "SELECT tbl FROM dally_outbox_totals WHERE entries > 0 ORDER BY tbl")
            // A table whose added columns are being filled holds its changes (``ColumnFill``).
            let filling = try ColumnFill.tables(db: db)
            for name in pendingTables where budget > 0 && scope.allowsUpload(name) && !filling.contains(name) {
                guard let table = tables[name], !table.schema.policy.localOnly else { continue }
                var tally = FlightTally()
                let section = try Self.pendingSection(
                    table, limit: budget, after: cursors[name], highestSeq: &highestSeq, tally: &tally, db: db)
                let droppedOnFull = table.schema.lifecycle.onFull == .dropOldest
                    ? try LifecycleLedger.droppedOnFull(name, db: db) : nil
                guard let last = section.ids.last,
                    let plannedSection = PlannedSection(table: name, ids: section.ids, tally: tally, droppedOnFull: droppedOnFull)
                else { continue }
                reached[name] = last
                planned.append(plannedSection)
                budget -= section.rows
                sections.append(section)
            }
            guard !sections.isEmpty else { return nil }
            let riding = scope.pullsRiding?(sections.map(\.table))
            let since = try Self.cloudCursors(tables: tables, db: db).entries.filter {
                scope.allowsPull($0.table) && riding?.contains($0.table) != false
            }
            // The header only: the sections were written as their rows were read.
            var request = BatchRequest(
                batchID: UUID().uuidString.lowercased(), gateway: gateway, replica: replicaID,
                since: TableVersions(since), scopes: scopes.restricted(to: since.map(\.table)), sections: [])
            request.resyncing = try ResyncLedger.tables(db: db).filter { table in since.contains { $0.table == table } }
            let batch = OutgoingBatch(
                batchID: request.batchID, body: request.encode(writtenSections: sections),
                rows: sections.reduce(0) { $0 + $1.rows }, resent: false, uploads: sections.map(\.table),
                pulls: since.map(\.table),
                outline: BatchOutline(sections: sections.map(\.outline)))
            return (
                .new(
                    NewBatch(
                        batch: batch, sections: planned, seen: Set(flights.map(\.batchID)), highestSeq: highestSeq,
                        carriesObjects: sections.contains { tables[$0.table].map { RowObjects.hasObjects($0.schema) } == true },
                        createdAt: createdAt)), reached
            )
        }
        guard let (batch, reached) = plan else { return nil }
        if !reached.isEmpty { sendCursors.withLock { $0.merge(reached) { _, new in new } } }
        return batch
    }

    /// The rows of `plan`'s `drop_oldest` tables whose pending changes were dropped since it
    /// read them (by table), looked up only where the table's drop count moved; and each such
    /// table's count now.
    private static func droppedSincePlanned(_ plan: NewBatch, db: Database) throws
        -> (dropped: [String: Set<String>], counts: [String: Int64])
    {
        var dropped: [String: Set<String>] = [:]
        var counts: [String: Int64] = [:]
        for section in plan.sections {
            guard let before = section.droppedOnFull else { continue }
            let now = try LifecycleLedger.droppedOnFull(section.table, db: db)
            counts[section.table] = now
            guard now != before else { continue }
            let gone = try Outbox.withoutEntries(section.json, table: section.table, db: db)
            if !gone.isEmpty { dropped[section.table] = gone }
        }
        return (dropped, counts)
    }

    /// How a plan's record went.
    private enum Record: Sendable {
        case recorded
        /// A batch recorded since the plan read the outbox may carry some of its rows (built
        /// meanwhile): nothing was recorded.
        case clashed
        /// Some of its rows' changes left the outbox since the plan (`drop_oldest`), by table,
        /// with each checked table's drop count now: nothing was recorded.
        case dropped([String: Set<String>], counts: [String: Int64])
    }

    /// Records `plan` as in flight, in one short sync transaction: a section per table
    /// (``FlightSections``) and its tally; or, with nothing recorded, why not.
    ///
    /// A table whose `drop_oldest` dropped changes since the plan read it (its drop count
    /// moved) has the plan's rows looked up: `drop_oldest` chooses among entries not in
    /// flight, which the plan's rows are until this record, and a dropped row the cloud never
    /// had is deleted from the replica, so sending it would give the cloud a row this replica
    /// no longer has.
    private func record(_ plan: NewBatch) async throws -> Record {
        // Compressed here, holding neither a reader nor the writer.
        let kept = Data(KeptBody.packed(plan.batch.body))
        let batchID = plan.batch.batchID
        let ranges = plan.sections.map {
            FlightSections.IDRange(batch: batchID, table: $0.table, lowest: $0.lowest, highest: $0.highest)
        }
        let tables = self.tables
        return try await groupCommit.perform(lane: .sync(.recordBatch)) { db, _ in
            guard try !FlightSections.clashes(with: ranges, seen: plan.seen, db: db) else { return .clashed }
            let (dropped, counts) = try Self.droppedSincePlanned(plan, db: db)
            guard dropped.isEmpty else { return .dropped(dropped, counts: counts) }
            for section in plan.sections {
                try FlightSections.record(
                    batch: batchID, table: section.table, ids: section.json, lowest: section.lowest,
                    highest: section.highest, seq: plan.highestSeq, db: db)
                // The tally counts the entries as the plan read them: a row of the section written
                // since (a higher sequence number: a seek, and the few rows written in between)
                // may have changed its entry, and the summary counts them instead.
                let writtenSince = try tables[section.table].map { table -> Bool in
                    let written = try String.fetchAll(
                        db.cachedStatement(
                            sql: "SELECT id FROM \(table.sqlTable) WHERE seq > ? AND id BETWEEN ? AND ?"),
                        arguments: [plan.highestSeq, section.lowest, section.highest])
                    return !written.isEmpty && !Set(section.ids).isDisjoint(with: written)
                } ?? true
                try FlightTally.keep(
                    section.tally, table: section.table, batch: batchID, stale: writtenSince || section.tallyStale, db: db)
            }
            if plan.carriesObjects { try ObjectLedger.announceUploads(inBatch: batchID, db: db) }
            try db.execute(
                sql: "INSERT INTO dally_inflight (batch, created_at, body, uploads, pulls) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    batchID, plan.createdAt, kept, Self.list(plan.batch.uploads), Self.list(plan.batch.pulls),
                ])
            return .recorded
        }
    }

    /// The batches in flight, oldest first.
    static func inFlight(db: Database) throws -> [InFlight] {
        // The body only where the tables are not recorded: it is the whole batch (hundreds of
        // KiB in a drain), and every plan and every decision reads this.
        try Row.fetchAll(
            db,
            sql: """
                SELECT batch, created_at, uploads, pulls, CASE WHEN uploads IS NULL OR pulls IS NULL THEN body END
                FROM dally_inflight ORDER BY created_at, batch
                """
        ).map { row in
            let batchID: String = row[0]
            if let uploads: String = row[2], let pulls: String = row[3] {
                return InFlight(batchID: batchID, createdAt: row[1], uploads: Self.names(uploads), pulls: Self.names(pulls))
            }
            // Recorded before batches named their tables: read them from the body.
            let request = try BatchRequest.decode(
                JSONParser.parse(KeptBody.unpacked(Array(row[4] as Data))), maxRows: .max)
            return InFlight(
                batchID: batchID, createdAt: row[1], uploads: request.sections.map(\.table),
                pulls: request.since.entries.map(\.table))
        }
    }

    private static func list(_ names: [String]) -> String { names.joined(separator: " ") }
    private static func names(_ list: String) -> [String] { list.split(separator: " ").map(String.init) }

    /// Forgets a batch in flight without applying anything, for a batch the cloud refused as
    /// a whole before applying any of it (too large): its rows stay pending and go out again
    /// in smaller batches.
    public func abandonBatch(batchID: String) async throws {
        try await groupCommit.perform(lane: .sync(.endFlight)) { db, _ in
            try FlightSections.forget(batch: batchID, db: db)
            try db.execute(sql: "DELETE FROM dally_inflight WHERE batch = ?", arguments: [batchID])
            try FlightTally.forget(batch: batchID, db: db)
        }
    }

    /// Per synced table, the highest cloud version the replica holds, in table-name order.
    public func cloudCursors() async throws -> TableVersions {
        let tables = self.tables
        return try await pool.read { db in try Self.cloudCursors(tables: tables, db: db) }
    }

    /// The tables whose added columns are being filled from the cloud (``ColumnFill``): their
    /// changes wait until a pull of the table from scratch ends.
    public func fillingTables() async throws -> Set<String> {
        try await pool.read { db in try ColumnFill.tables(db: db) }
    }

    /// The tables being pulled again from scratch after a `resync` page (``ResyncLedger``):
    /// requests name them in ``BatchRequest/resyncing``.
    public func resyncingTables() async throws -> [String] {
        try await pool.read { db in try ResyncLedger.tables(db: db) }
    }

    static func cloudCursors(tables: [String: TableSQL], db: Database) throws -> TableVersions {
        var stored: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, version FROM dally_cloud_cursors") { stored[row[0]] = row[1] }
        return TableVersions(
            tables.values.filter { !$0.schema.policy.localOnly }.map(\.schema.name).sorted().map { ($0, stored[$0] ?? 0) })
    }

    /// The waiting rows of one table as a batch section (every column, in schema order), in id
    /// order, from just after `cursor` (the last id the previous batch took), wrapping around
    /// to the first id; `highestSeq` rises to the table's highest local sequence number when
    /// the section holds a row, and `tally` counts the outbox entries it takes.
    ///
    /// Id order, not the order rows became dirty, because the replica's row table and the
    /// outbox are both ordered by id: a batch of neighbouring ids is read from, and settled
    /// into, a few neighbouring pages, where a batch of rows written one after another (with
    /// random ids, as UUIDs are) touches a page per row in each. Settling an answer cost
    /// 1.6x less this way (docs/BENCHMARKS.md, "A long outage's backlog"). It changes only
    /// which rows go first when more wait than one batch takes; going on from the cursor, every
    /// waiting row is taken within one pass over the table's outbox, so none waits for ever.
    private static func pendingSection(
        _ table: TableSQL, limit: Int, after cursor: String?, highestSeq: inout Int64, tally: inout FlightTally,
        db: Database
    ) throws -> BatchSectionWriter {
        let schema = table.schema
        var section = BatchSectionWriter(
            table: schema.name, columns: schema.columns.map(\.name), expectedRows: min(limit, 1_024))
        // No row above the highest id in flight is in flight: past it (where a drain's next
        // batch reads, after the ones on the wire) a row needs no lookup in the ids in flight.
        let aboveFlight = try FlightSections.highestInFlight(table: schema.name, db: db)
        try pendingRows(
            table, limit: limit, from: "o.row_id > ?", cursor ?? "", aboveFlight: aboveFlight, into: &section,
            tally: &tally, db: db)
        if section.rows < limit, let cursor {
            try pendingRows(
                table, limit: limit - section.rows, from: "o.row_id <= ?", cursor, aboveFlight: aboveFlight,
                into: &section, tally: &tally, db: db)
        }
        if section.rows > 0 {
            // From this read's snapshot, not the commit ledger's latest: a number taken by a
            // write after the snapshot would count that write's row as unchanged.
            let top = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(seq) FROM \(table.sqlTable)")) ?? 0
            highestSeq = max(highestSeq, top)
        }
        return section
    }

    /// Appends up to `limit` waiting rows of `table` whose id meets `range` (bound to `bound`),
    /// in id order: the outbox's own order, so SQLite walks its primary key and sorts nothing.
    /// Rows in flight are left out; those with an id above `aboveFlight` (the highest in
    /// flight; nil: none is) without looking, the others against the ids in flight, which
    /// SQLite reads once for the statement, and only if a row needs them. Each row is written
    /// into `section` as it is stepped (``WireColumn/write(_:at:type:into:)``), and its entry
    /// counted in `tally`.
    private static func pendingRows(
        _ table: TableSQL, limit: Int, from range: String, _ bound: String, aboveFlight: String?,
        into section: inout BatchSectionWriter, tally: inout FlightTally, db: Database
    ) throws {
        let schema = table.schema
        let sql = """
            SELECT o.base_version, \(table.selectList(qualifiedBy: "t")), o.first_dirty_at, o.bytes
            FROM dally_outbox o JOIN \(table.sqlTable) t ON t.id = o.row_id
            WHERE o.tbl = ?1 AND \(range) AND o.parked IS NULL
                AND (?3 IS NULL OR o.row_id > ?3 OR o.row_id NOT IN (\(FlightSections.flyingIDs(table: "?1"))))
                \(schema.policy.atomicSync ? "AND NOT \(Outbox.awaitsObjects)" : "")
            ORDER BY o.row_id LIMIT ?4
            """
        let statement = try db.cachedStatement(sql: sql)
        let rows = try Row.fetchCursor(statement, arguments: [schema.name, bound, aboveFlight, limit])
        // GRDB steps; the columns are read by SQLite's own calls (``WireColumn``), in
        // `selectList`'s order after the base version: id, seq, updated_at, deleted, version,
        // the values; then the entry's first-dirty time and bytes.
        let row = statement.sqliteStatement
        let types = schema.columns.map(\.type)
        let entryColumn = Int32(6 + types.count)
        while try rows.next() != nil {
            tally.add(at: sqlite3_column_int64(row, entryColumn), bytes: sqlite3_column_int64(row, entryColumn + 1))
            let deleted = sqlite3_column_int64(row, 4) != 0
            section.beginRow(
                id: Statement.text(row, at: 1),
                baseVersion: sqlite3_column_type(row, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(row, 0),
                updatedAt: sqlite3_column_int64(row, 3), deleted: deleted)
            if !deleted {
                for (i, type) in types.enumerated() {
                    section.value { WireColumn.write(row, at: Int32(6 + i), type: type, into: &$0) }
                }
            }
            section.endRow()
        }
    }
}
