import DallySync
import PostgresNIO

/// The cloud's shelf of gateways' compression dictionaries, in the same database as the rows,
/// so that a batch compressed with a dictionary offered to one node decodes on any node.
extension PostgresCloudStore {
    public func offerDictionary(_ dictionary: StoredDictionary, limit: Int) async throws -> DictionaryOffer {
        let access = self.access
        return try await access.transaction { connection in
            // One offer per gateway at a time across nodes, so that the count below holds.
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext(\("dictionaries/" + dictionary.gateway)))", logger: access.logger)
            let stored = try await connection.query(
                "SELECT bytes FROM cloud_dictionaries WHERE gateway = \(dictionary.gateway) AND id = \(Int64(dictionary.id))",
                logger: access.logger)
            for try await row in stored {
                return try PostgresValues.bytes(row.makeRandomAccess()[0]) == dictionary.bytes ? .alreadyStored : .idTaken
            }
            let held = try await PostgresCloudStore.count(
                "SELECT COUNT(*) FROM cloud_dictionaries WHERE gateway = \(dictionary.gateway)", on: connection,
                logger: access.logger)
            guard held < limit else { return .full(limit: limit) }
            try await connection.query(
                """
                INSERT INTO cloud_dictionaries (gateway, id, tbl, bytes, created_at) \
                VALUES (\(dictionary.gateway), \(Int64(dictionary.id)), \(dictionary.table), \
                \(ByteBuffer(bytes: dictionary.bytes)), \(dictionary.createdAt))
                """, logger: access.logger)
            return .stored
        }
    }

    public func dictionary(gateway: String, id: UInt32) async throws -> StoredDictionary? {
        let logger = access.logger
        return try await access.withConnection { connection in
            let rows = try await connection.query(
                "SELECT tbl, bytes, created_at FROM cloud_dictionaries WHERE gateway = \(gateway) AND id = \(Int64(id))",
                logger: logger)
            for try await row in rows {
                let cells = row.makeRandomAccess()
                return StoredDictionary(
                    gateway: gateway, id: id, table: try cells[0].decode(String.self),
                    bytes: try PostgresValues.bytes(cells[1]), createdAt: try cells[2].decode(Int64.self))
            }
            return nil
        }
    }

    public func dictionaries(gateway: String) async throws -> [StoredDictionary] {
        let logger = access.logger
        return try await access.withConnection { connection in
            let rows = try await connection.query(
                "SELECT id, tbl, created_at FROM cloud_dictionaries WHERE gateway = \(gateway) ORDER BY created_at, id",
                logger: logger)
            var found: [StoredDictionary] = []
            for try await (id, table, createdAt) in rows.decode((Int64, String, Int64).self) {
                found.append(
                    StoredDictionary(
                        gateway: gateway, id: UInt32(truncatingIfNeeded: id), table: table, bytes: [],
                        createdAt: createdAt))
            }
            return found
        }
    }

    public func deleteDictionary(gateway: String, id: UInt32) async throws -> Bool {
        let logger = access.logger
        return try await access.withConnection { connection in
            let rows = try await connection.query(
                "DELETE FROM cloud_dictionaries WHERE gateway = \(gateway) AND id = \(Int64(id)) RETURNING 1",
                logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }
}
