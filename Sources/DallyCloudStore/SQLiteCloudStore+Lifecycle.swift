import DallySync
import Foundation
import GRDB

extension SQLiteCloudStore {
    /// Tombstones purged per transaction, so that batches never wait long behind compaction.
    static let purgePieceRows = 5_000

    public func recordCursors(_ cursors: [GatewayCursor]) async throws {
        guard !cursors.isEmpty else { return }
        try await writing { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO cloud_gateway_cursors (gateway, tbl, version, seen_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT(gateway, tbl) DO UPDATE SET version = excluded.version, seen_at = excluded.seen_at
                    WHERE excluded.seen_at >= seen_at
                    """)
            for cursor in cursors {
                try statement.execute(arguments: [cursor.gateway, cursor.table, cursor.version, cursor.seenAt])
            }
        }
    }

    public func gatewayCursors() async throws -> [GatewayCursor] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT gateway, tbl, version, seen_at FROM cloud_gateway_cursors ORDER BY gateway, tbl")
                .map { GatewayCursor(gateway: $0[0], table: $0[1], version: $0[2], seenAt: $0[3]) }
        }
    }

    public func recordDeclarations(_ told: ToldDocument) async throws {
        try await writing { db in
            try db.execute(
                sql: """
                    INSERT INTO cloud_gateway_declarations (gateway, document, told_at) VALUES (?, ?, ?)
                    ON CONFLICT(gateway) DO UPDATE SET document = excluded.document, told_at = excluded.told_at
                    WHERE excluded.told_at >= told_at
                    """, arguments: [told.gateway, Data(told.document), told.toldAt])
        }
    }

    public func toldDeclarations() async throws -> [ToldDocument] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT gateway, document, told_at FROM cloud_gateway_declarations ORDER BY gateway")
                .map { row in
                    let document: Data = row[1]
                    return ToldDocument(gateway: row[0], document: Array(document), toldAt: row[2])
                }
        }
    }

    public func purgeTombstones(table: String, upTo version: Int64, before cutoff: Int64) async throws -> Int64 {
        guard let sql = tables[table] else { return 0 }
        var purged: Int64 = 0
        while true {
            let removed = try await writing { db -> Int64 in
                // The piece ends at the version of its last tombstone, and the horizon moves
                // there in the same transaction as the deletes: a reader sees both or neither.
                guard
                    let pieceEnd = try Int64.fetchOne(
                        db,
                        sql: """
                            SELECT MAX(version) FROM (SELECT version FROM \(sql.sqlTable)
                                WHERE deleted = 1 AND version <= ? AND updated_at < ? ORDER BY version LIMIT ?)
                            """,
                        arguments: [version, cutoff, Self.purgePieceRows])
                else { return 0 }
                try db.execute(
                    sql: "DELETE FROM \(sql.sqlTable) WHERE deleted = 1 AND version <= ? AND updated_at < ?",
                    arguments: [pieceEnd, cutoff])
                let count = Int64(db.changesCount)
                try db.execute(
                    sql: "UPDATE cloud_tables SET horizon = MAX(horizon, ?) WHERE tbl = ?", arguments: [pieceEnd, table])
                return count
            }
            purged += removed
            if removed < Self.purgePieceRows { return purged }
        }
    }
}
