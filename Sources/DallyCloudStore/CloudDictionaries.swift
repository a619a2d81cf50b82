import DallySync
import Foundation
import DallyStore
import GRDB

/// The cloud's shelf of gateways' compression dictionaries, in the same database as the rows:
/// a dictionary outlives restarts as long as the batches compressed with it may.
extension SQLiteCloudStore {
    static let createDictionaries = """
        CREATE TABLE cloud_dictionaries (
            gateway TEXT NOT NULL,
            id INTEGER NOT NULL,
            tbl TEXT NOT NULL,
            bytes BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (gateway, id)
        ) WITHOUT ROWID;
        """

    public func offerDictionary(_ dictionary: StoredDictionary, limit: Int) async throws -> DictionaryOffer {
        try await writing { db in
            if let stored = try Data.fetchOne(
                db, sql: "SELECT bytes FROM cloud_dictionaries WHERE gateway = ? AND id = ?",
                arguments: [dictionary.gateway, Int64(dictionary.id)])
            {
                return Array(stored) == dictionary.bytes ? .alreadyStored : .idTaken
            }
            let held = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM cloud_dictionaries WHERE gateway = ?", arguments: [dictionary.gateway]) ?? 0
            guard held < limit else { return .full(limit: limit) }
            try db.execute(
                sql: "INSERT INTO cloud_dictionaries (gateway, id, tbl, bytes, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    dictionary.gateway, Int64(dictionary.id), dictionary.table, Data(dictionary.bytes),
                    dictionary.createdAt,
                ])
            return .stored
        }
    }

    public func dictionary(gateway: String, id: UInt32) async throws -> StoredDictionary? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT tbl, bytes, created_at FROM cloud_dictionaries WHERE gateway = ? AND id = ?",
                arguments: [gateway, Int64(id)]
            ).map { row in
                StoredDictionary(
                    gateway: gateway, id: id, table: row[0], bytes: Array(row[1] as Data), createdAt: row[2])
            }
        }
    }

    public func dictionaries(gateway: String) async throws -> [StoredDictionary] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT id, tbl, created_at FROM cloud_dictionaries WHERE gateway = ? ORDER BY created_at, id",
                arguments: [gateway]
            ).map { row in
                StoredDictionary(
                    gateway: gateway, id: UInt32(truncatingIfNeeded: row[0] as Int64), table: row[1], bytes: [],
                    createdAt: row[2])
            }
        }
    }

    public func deleteDictionary(gateway: String, id: UInt32) async throws -> Bool {
        try await writing { db in
            try db.execute(
                sql: "DELETE FROM cloud_dictionaries WHERE gateway = ? AND id = ?", arguments: [gateway, Int64(id)])
            return db.changesCount > 0
        }
    }
}
