import DallyCore
import DallySync
import Foundation
import GRDB

/// A batch ready to send to the cloud, already persisted as in flight.
public struct OutgoingBatch: Sendable {
    public let batchID: String
    /// The encoded ``BatchRequest``, uncompressed: a retry resends exactly these bytes.
    public let body: [UInt8]
    public let rows: Int
    /// Whether this batch was in flight already (sent before, perhaps by an earlier process).
    public let resent: Bool
}

extension ReplicaStore {
    /// The batch to send next, or nil when nothing is pending.
    ///
    /// A batch in flight (sent before, answer not applied, perhaps before a restart) comes
    /// first and unchanged: same id, same body, so the cloud recognises the retry. Otherwise a
    /// new batch is built from the outbox, oldest entries first, and recorded as in flight, with
    /// the local sequence number of every row it carries, before it is returned, so that
    /// nothing leaves the box that the replica does not remember sending.
    public func nextBatch(gateway: String, maxRows: Int) async throws -> OutgoingBatch? {
        let tables = self.tables
        let replicaID = self.replicaID
        return try await groupCommit.perform { db, context in
            if let row = try Row.fetchOne(db, sql: "SELECT batch, body FROM dally_inflight LIMIT 1") {
                let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_inflight_rows") ?? 0
                return OutgoingBatch(batchID: row[0], body: Array(row[1] as Data), rows: rows, resent: true)
            }
            var sections: [BatchRequest.Section] = []
            var budget = maxRows
            let pendingTables = try String.fetchAll(
                db, sql: "SELECT DISTINCT tbl FROM dally_outbox WHERE parked IS NULL ORDER BY tbl")
            for name in pendingTables where budget > 0 {
                guard let table = tables[name], !table.schema.policy.localOnly else { continue }
                let (section, seqs) = try Self.pendingSection(table, limit: budget, db: db)
                guard !section.changes.isEmpty else { continue }
                for (id, seq) in seqs {
                    try db.execute(
                        sql: "INSERT INTO dally_inflight_rows (tbl, row_id, seq) VALUES (?, ?, ?)",
                        arguments: [name, id, seq])
                }
                budget -= section.changes.count
                sections.append(section)
            }
            guard !sections.isEmpty else { return nil }
            let request = BatchRequest(
                batchID: UUID().uuidString.lowercased(), gateway: gateway, replica: replicaID,
                since: try Self.cloudCursors(tables: tables, db: db), sections: sections)
            let body = request.encode()
            try db.execute(
                sql: "INSERT INTO dally_inflight (batch, created_at, body) VALUES (?, ?, ?)",
                arguments: [request.batchID, context.now, Data(body)])
            return OutgoingBatch(batchID: request.batchID, body: body, rows: request.rowCount, resent: false)
        }
    }

    /// Forgets the batch in flight without applying anything, for a batch the cloud refused as
    /// a whole before applying any of it (too large): its rows stay pending and go out again
    /// in smaller batches.
    public func abandonBatch(batchID: String) async throws {
        try await groupCommit.perform { db, _ in
            guard try String.fetchOne(db, sql: "SELECT batch FROM dally_inflight") == batchID else { return }
            try db.execute(sql: "DELETE FROM dally_inflight_rows")
            try db.execute(sql: "DELETE FROM dally_inflight")
        }
    }

    /// Per synced table, the highest cloud version the replica holds, in table-name order.
    public func cloudCursors() async throws -> TableVersions {
        let tables = self.tables
        return try await pool.read { db in try Self.cloudCursors(tables: tables, db: db) }
    }

    static func cloudCursors(tables: [String: TableSQL], db: Database) throws -> TableVersions {
        var stored: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, version FROM dally_cloud_cursors") { stored[row[0]] = row[1] }
        return TableVersions(
            tables.values.filter { !$0.schema.policy.localOnly }.map(\.schema.name).sorted().map { ($0, stored[$0] ?? 0) })
    }

    /// The pending rows of one table as a batch section (every column, in schema order), with
    /// the local sequence number of each row as sent.
    private static func pendingSection(_ table: TableSQL, limit: Int, db: Database) throws
        -> (BatchRequest.Section, [(String, Int64)])
    {
        let schema = table.schema
        let sql = """
            SELECT o.base_version, \(table.selectList(qualifiedBy: "t"))
            FROM dally_outbox o JOIN \(table.sqlTable) t ON t.id = o.row_id
            WHERE o.tbl = ? AND o.parked IS NULL ORDER BY o.first_dirty_at, o.row_id LIMIT ?
            """
        var changes: [BatchRequest.Change] = []
        var seqs: [(String, Int64)] = []
        let rows = try Row.fetchCursor(db, sql: sql, arguments: [schema.name, limit])
        while let row = try rows.next() {
            let stored = RowDecoding.storedRow(row, schema: schema, offset: 1)
            changes.append(
                BatchRequest.Change(
                    id: stored.id, baseVersion: row[0], updatedAt: stored.updatedAt, deleted: stored.deleted,
                    values: stored.deleted ? [] : stored.values.map(\.wireJSON)))
            seqs.append((stored.id, stored.seq))
        }
        return (BatchRequest.Section(table: schema.name, columns: schema.columns.map(\.name), changes: changes), seqs)
    }
}
