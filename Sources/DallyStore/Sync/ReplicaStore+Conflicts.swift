import DallyCore
import DallySync
import GRDB

extension ReplicaStore {
    /// Conflicts and rejections, newest first; only open ones unless `includeResolved`.
    public func conflicts(table: String?, includeResolved: Bool, limit: Int) async throws -> [ConflictRecord] {
        if let table { _ = try tableSQL(table) }
        let tables = self.tables
        return try await pool.read { db in
            var sql = "SELECT * FROM dally_conflicts WHERE 1 = 1"
            var arguments: StatementArguments = []
            if let table {
                sql += " AND tbl = ?"
                arguments += [table]
            }
            if !includeResolved { sql += " AND status = 'open'" }
            sql += " ORDER BY detected_at DESC, tbl, row_id LIMIT ?"
            arguments += [limit]
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let local = try tables[row["tbl"] as String].flatMap { try CloudRowWriter.current(row["row_id"], table: $0, db: db) }
                return ConflictLog.read(row, local: local)
            }
        }
    }

    /// Settles the open conflict or rejection of row `id`, and returns the row as now stored.
    ///
    /// - Throws: `not_found` when the row has no open conflict; `bad_request` for `takeServer`
    ///   on a rejection (the cloud sent no row to take); a write's own errors for `write`.
    public func resolveConflict(table: String, id: String, _ resolution: ConflictResolution) async throws -> StoredRow {
        let sql = try tableSQL(table)
        return try await groupCommit.perform { db, context in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM dally_conflicts WHERE tbl = ? AND row_id = ? AND status = 'open'",
                    arguments: [table, id])
            else {
                throw DallyError(.notFound, "row '\(id)' of '\(table)' has no open conflict")
            }
            let record = ConflictLog.read(row, local: nil)
            switch resolution {
            case .takeLocal:
                try Self.unpark(id, table: table, basedOn: record.server?.version, db: db)
                try Self.requeueRefusedObjects(of: id, table: table, db: db)
            case .takeServer:
                guard let server = record.server else {
                    throw DallyError(
                        .badRequest,
                        "the cloud rejected this change and sent no row to take; fix the cause and take local, or write new values")
                }
                let values = try Self.serverValues(server.valuesJSON)
                let changed = ChangePage.ChangedRow(
                    id: id, version: server.version, updatedAt: server.updatedAt, deleted: server.deleted,
                    values: values.map(\.value))
                try CloudRowWriter.write(
                    changed, columns: CloudRowWriter.positions(of: values.map(\.key), in: sql.schema), table: sql,
                    old: try CloudRowWriter.current(id, table: sql, db: db), db: db, context: &context)
            case .write(let write):
                _ = try RowWriter.apply(write, table: sql, db: db, context: &context)
                try Self.unpark(id, table: table, basedOn: record.server?.version, db: db)
                try Self.requeueRefusedObjects(of: id, table: table, db: db)
            }
            try db.execute(
                sql: "UPDATE dally_conflicts SET status = 'resolved' WHERE tbl = ? AND row_id = ?", arguments: [table, id])
            guard let stored = try CloudRowWriter.current(id, table: sql, db: db) else {
                throw DallyError(.notFound, "row '\(id)' of '\(table)' does not exist")
            }
            return stored
        }
    }

    /// Lets one change per table that the cloud refused for its schema go again
    /// (``SchemaRefusals``), of `table` only when given; returns the tables probed.
    @discardableResult
    public func retrySchemaRefusals(table: String? = nil) async throws -> [String] {
        try await groupCommit.perform(lane: .sync(.upkeep)) { db, _ in try SchemaRefusals.probe(table: table, db: db) }
    }

    /// Forgets a resolved record.
    ///
    /// - Throws: `not_found` when there is none, `version_mismatch` when it is still open.
    public func dismissConflict(table: String, id: String) async throws {
        _ = try tableSQL(table)
        try await pool.write { db in
            guard let status = try String.fetchOne(
                db, sql: "SELECT status FROM dally_conflicts WHERE tbl = ? AND row_id = ?", arguments: [table, id])
            else { throw DallyError(.notFound, "row '\(id)' of '\(table)' has no conflict on record") }
            guard status == ConflictRecord.Status.resolved.rawValue else {
                throw DallyError(.versionMismatch, "the conflict of row '\(id)' is still open: resolve it first")
            }
            try db.execute(sql: "DELETE FROM dally_conflicts WHERE tbl = ? AND row_id = ?", arguments: [table, id])
        }
    }

    /// How many records are open, per table.
    public func openConflictCounts() async throws -> [String: Int64] {
        try await pool.read { db in try Self.openConflictCounts(db: db) }
    }

    static func openConflictCounts(db: Database) throws -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, COUNT(*) FROM dally_conflicts WHERE status = 'open' GROUP BY tbl") {
            counts[row[0]] = row[1]
        }
        return counts
    }

    /// Lets a parked change go out again, based on the cloud's latest known version (which
    /// downstream pages keep current while the conflict is open), so it replaces that row.
    private static func unpark(_ id: String, table: String, basedOn version: Int64?, db: Database) throws {
        try db.execute(
            sql: "UPDATE dally_outbox SET parked = NULL, base_version = COALESCE(?, base_version) WHERE tbl = ? AND row_id = ?",
            arguments: [version, table, id])
    }

    /// Puts the objects row `id` names that the cloud refused back in the upload queue: the
    /// record's settling says the cause is fixed (the cloud's limit raised; a smaller object
    /// written instead leaves the refused one unnamed, and collected).
    private static func requeueRefusedObjects(of id: String, table: String, db: Database) throws {
        try db.execute(
            sql: """
                UPDATE dally_object_uploads SET refused = 0, bytes_sent = 0, chunks_done = 0
                WHERE refused = 1 AND hash IN (SELECT hash FROM dally_object_refs WHERE tbl = ? AND row_id = ?)
                """,
            arguments: [table, id])
    }

    private static func serverValues(_ json: String) throws -> [JSONMember] {
        guard case .object(let members) = try JSONParser.parse(json) else { return [] }
        return members
    }
}
