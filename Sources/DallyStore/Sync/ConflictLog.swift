import DallyCore
import DallySync
import GRDB

enum ConflictLog {
    static let upsert = """
        INSERT INTO dally_conflicts (tbl, row_id, kind, status, detected_at, policy, winner, server_version,
            server_updated_at, server_deleted, server_values, error_code, error_message, error_field)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(tbl, row_id) DO UPDATE SET kind = excluded.kind, status = excluded.status,
            detected_at = excluded.detected_at, policy = excluded.policy, winner = excluded.winner,
            server_version = excluded.server_version, server_updated_at = excluded.server_updated_at,
            server_deleted = excluded.server_deleted, server_values = excluded.server_values,
            error_code = excluded.error_code, error_message = excluded.error_message, error_field = excluded.error_field
        """

    static func record(_ conflict: BatchAnswer.Conflict, id: String, table: TableSQL, now: Int64, db: Database) throws {
        let server = conflict.server
        try db.execute(
            sql: upsert,
            arguments: [
                table.schema.name, id, ConflictRecord.Kind.conflict.rawValue,
                (conflict.winner == .none ? ConflictRecord.Status.open : .resolved).rawValue, now,
                conflict.policy.rawValue, conflict.winner.rawValue, server.version, server.updatedAt, server.deleted,
                valuesJSON(server.values, columns: table.schema.columns.map(\.name)), nil, nil, nil,
            ])
    }

    static func record(_ rejection: BatchAnswer.RowRejection, id: String, table: TableSQL, now: Int64, db: Database)
        throws
    {
        try db.execute(
            sql: upsert,
            arguments: [
                table.schema.name, id, ConflictRecord.Kind.error.rawValue, ConflictRecord.Status.open.rawValue, now, nil,
                nil, nil, nil, nil, nil, rejection.code, rejection.message, rejection.field,
            ])
    }

    /// Keeps an open conflict's copy of the cloud's row current while the local change waits.
    static func refreshServerSide(table: TableSQL, row: ChangePage.ChangedRow, pageColumns: [String], db: Database)
        throws
    {
        try db.execute(
            sql: """
                UPDATE dally_conflicts SET server_version = ?, server_updated_at = ?, server_deleted = ?, server_values = ?
                WHERE tbl = ? AND row_id = ? AND kind = 'conflict' AND status = 'open'
                """,
            arguments: [
                row.version, row.updatedAt, row.deleted, valuesJSON(row.values, columns: pageColumns), table.schema.name,
                row.id,
            ])
    }

    static func valuesJSON(_ values: [JSONValue], columns: [String]) -> String {
        JSONValue.object(zip(columns, values).map { JSONMember($0, $1) }).jsonText
    }

    static func read(_ row: Row, local: StoredRow?) -> ConflictRecord {
        var server: ConflictRecord.ServerSide?
        if let version: Int64 = row["server_version"] {
            server = .init(
                version: version, updatedAt: row["server_updated_at"] ?? 0, deleted: row["server_deleted"] ?? false,
                valuesJSON: row["server_values"] ?? "{}")
        }
        var error: BatchAnswer.RowRejection?
        if let code: String = row["error_code"] {
            error = .init(code: code, message: row["error_message"] ?? "", field: row["error_field"])
        }
        return ConflictRecord(
            table: row["tbl"], id: row["row_id"], kind: ConflictRecord.Kind(rawValue: row["kind"]) ?? .conflict,
            status: ConflictRecord.Status(rawValue: row["status"]) ?? .open, detectedAt: row["detected_at"],
            policy: row["policy"], winner: row["winner"], server: server, error: error, local: local)
    }
}
