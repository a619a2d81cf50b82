import Foundation
import GRDB

extension ReplicaStore {
    /// Every kept dictionary, oldest first.
    public func keptDictionaries() throws -> [KeptDictionary] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, tbl, bytes, created_at, acked_at FROM dally_dictionaries ORDER BY created_at, id")
                .map { row in
                    KeptDictionary(
                        id: UInt32(truncatingIfNeeded: row[0] as Int64), table: row[1], bytes: Array(row[2] as Data),
                        createdAt: row[3], ackedAt: row[4])
                }
        }
    }

    /// Keeps a freshly trained dictionary, not yet acknowledged.
    public func keepDictionary(_ dictionary: KeptDictionary) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO dally_dictionaries (id, tbl, bytes, created_at, acked_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    Int64(dictionary.id), dictionary.table, Data(dictionary.bytes), dictionary.createdAt,
                    dictionary.ackedAt,
                ])
        }
    }

    /// Records that the cloud holds dictionary `id` (`at` non-nil), or that it no longer does.
    public func setDictionaryAcknowledged(id: UInt32, at: Int64?) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE dally_dictionaries SET acked_at = ? WHERE id = ?", arguments: [at, Int64(id)])
        }
    }

    public func dropDictionary(id: UInt32) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM dally_dictionaries WHERE id = ?", arguments: [Int64(id)])
        }
    }
}
