import DallyCore
import GRDB

/// The replica's part of the TinySync endpoint: its writes go through the same group commit,
/// outbox and commit observers as every local write; its cursor is a ``TinySyncMark``.
extension ReplicaStore {
    /// Applies a TinySync request's writes, table by table, in one transaction; each row is
    /// answered on its own and a refused row never stops the others.
    ///
    /// TinySync's lists are lenient where Dally's batch is strict: a `.patch` (TinySync's
    /// `updated`) of a row that was never here creates it, and a `.delete` of such a row is
    /// saved with nothing to do, so that a client's changes made before it ever synced still
    /// land. A `.patch` of a deleted row is refused (`not_found`): the client sends it in
    /// `created` to bring it back.
    ///
    /// For example:
    ///
    /// ```swift
    /// let outcomes = try await store.saveTinySync([(table: "post", writes: [write])])
    /// outcomes[0].saved   // [("521fa720594cc48c1d000003", 18)]
    /// ```
    public func saveTinySync(_ entities: [(table: String, writes: [RowWrite])]) async throws -> [TinySyncSaveOutcome] {
        var tables: [(TableSQL, [RowWrite])] = []
        for entity in entities { tables.append((try tableSQL(entity.table), entity.writes)) }
        guard tables.contains(where: { !$0.1.isEmpty }) else { return entities.map { _ in TinySyncSaveOutcome() } }
        let work = tables
        return try await groupCommit.perform { db, context in
            var outcomes: [TinySyncSaveOutcome] = []
            for (table, writes) in work {
                var outcome = TinySyncSaveOutcome()
                for write in writes {
                    do {
                        let seq = try Self.applyTinySync(write, table: table, db: db, context: &context)
                        outcome.saved.append((write.id, seq))
                    } catch let error as DallyError {
                        outcome.errors.append(BatchOutcome.RowError(id: write.id, error: error))
                    }
                }
                outcomes.append(outcome)
            }
            return outcomes
        }
    }

    /// One write with TinySync's leniency; the sequence it took, 0 when there was nothing to do.
    private static func applyTinySync(_ write: RowWrite, table: TableSQL, db: Database, context: inout CommitContext) throws
        -> Int64
    {
        guard write.kind != .put else { return try RowWriter.apply(write, table: table, db: db, context: &context).row.seq }
        let deleted = try Bool.fetchOne(
            db, sql: "SELECT deleted FROM \(table.sqlTable) WHERE id = ?", arguments: [write.id])
        switch (write.kind, deleted) {
        case (.delete, nil):
            return 0
        case (.patch, nil):
            var create = RowWrite(id: write.id, kind: .put, values: write.values, updatedAt: write.updatedAt, expectedSeq: nil)
            create.clientScope = write.clientScope
            return try RowWriter.apply(create, table: table, db: db, context: &context).row.seq
        case (.patch, true?):
            throw DallyError(
                .notFound, "row '\(write.id)' was deleted on the server; send it in \"created\" to restore it", field: "id")
        case (.delete, false?) where write.clientScope != nil:
            // A live row outside a scoped token's scope is, to that token, one never here.
            do {
                return try RowWriter.apply(write, table: table, db: db, context: &context).row.seq
            } catch let error as DallyError where error.code == .notFound {
                return 0
            }
        default:
            return try RowWriter.apply(write, table: table, db: db, context: &context).row.seq
        }
    }

    /// The sequence a TinySync `last_synced` time resumes after: the greatest mark's at or
    /// before it; nil when none, and the answer starts from the beginning
    /// (``TinySyncMarkRule/resumeSeq(for:marks:)``).
    public func tinySyncResumeSeq(for time: Int64) async throws -> Int64? {
        try await pool.read { db in try TinySyncMarks.resumeSeq(for: time, db: db) }
    }

    /// Records the cursor of an answer whose rows reached `seq`; returns it with its time.
    ///
    /// Runs as a local write (it shares a commit with writes waiting at the same time): the
    /// mark's time is chosen inside the transaction, so marks are strictly increasing.
    public func recordTinySyncMark(seq: Int64) async throws -> TinySyncMark {
        try await groupCommit.perform { db, context in try TinySyncMarks.record(seq: seq, now: context.now, db: db) }
    }

    /// Every mark, oldest first; for tests and diagnostics.
    public func tinySyncMarks() async throws -> [TinySyncMark] {
        try await pool.read { db in try TinySyncMarks.all(db: db) }
    }

    /// Rows of `table` whose latest change has a sequence in `after+1 … through`, in sequence
    /// order, at most `limit`.
    ///
    /// `filters` (equality, ANDed; null matches null) select live rows; a tombstone has no
    /// values left to match, so with `includeDeleted` every tombstone in the range is
    /// returned whatever the filters.
    ///
    /// - Throws: ``DallyError`` `bad_query` for a filter naming no column of the table.
    public func tinySyncRows(
        table name: String, after: Int64, through: Int64, filters: [(column: String, value: Value)],
        includeDeleted: Bool, limit: Int
    ) async throws -> [StoredRow] {
        let table = try tableSQL(name)
        var live = ["deleted = 0"]
        var arguments: [DatabaseValue] = [after.databaseValue, through.databaseValue]
        for filter in filters {
            guard let column = table.sqlColumn(named: filter.column) else {
                throw DallyError(.badQuery, "table '\(name)' has no column '\(filter.column)'", field: filter.column)
            }
            if filter.value == .null {
                live.append("\(column) IS NULL")
            } else {
                live.append("\(column) = ?")
                arguments.append(RowDecoding.databaseValue(filter.value))
            }
        }
        arguments.append(limit.databaseValue)
        let bound = StatementArguments(arguments)
        let selected = "(\(live.joined(separator: " AND ")))" + (includeDeleted ? " OR deleted = 1" : "")
        let sql = """
            SELECT \(table.selectList) FROM \(table.sqlTable) WHERE seq > ? AND seq <= ? AND (\(selected)) \
            ORDER BY seq LIMIT ?
            """
        return try await pool.read { db in
            try RowDecoding.storedRows(db.makeStatement(sql: sql), arguments: bound, schema: table.schema)
        }
    }
}
