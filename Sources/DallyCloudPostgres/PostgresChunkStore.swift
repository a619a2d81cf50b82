import DallyObjects
import PostgresNIO

/// The cloud's object chunks in PostgreSQL (`cloud_chunks`, bytes as `bytea`), so that every
/// node serves every chunk. Keyed by the hash's 64 lowercase hex digits, as `cloud_objects` is.
struct PostgresChunkStore: ChunkStore {
    let access: PostgresAccess

    func put(_ hash: ContentHash, bytes: [UInt8], now: Int64) async throws -> Bool {
        let logger = access.logger
        return try await access.withConnection { connection in
            let rows = try await connection.query(
                """
                INSERT INTO cloud_chunks (hash, bytes, size, stored_at) \
                VALUES (\(hash.hex), \(ByteBuffer(bytes: bytes)), \(Int64(bytes.count)), \(now)) \
                ON CONFLICT (hash) DO NOTHING RETURNING 1
                """, logger: logger)
            for try await _ in rows { return true }
            return false
        }
    }

    func present(_ hashes: [ContentHash]) async throws -> Set<ContentHash> {
        guard !hashes.isEmpty else { return [] }
        return try await access.withConnection { connection in
            try await Self.present(hashes, lock: false, on: connection, access: access)
        }
    }

    /// Which of `hashes` are stored; with `lock`, each found one is locked (`FOR SHARE`) until
    /// the caller's transaction ends, so that no sweep deletes it meanwhile.
    static func present(_ hashes: [ContentHash], lock: Bool, on connection: PostgresConnection, access: PostgresAccess)
        async throws -> Set<ContentHash>
    {
        var binds = PostgresBindings()
        binds.append(hashes.map(\.hex))
        let sql = "SELECT hash FROM cloud_chunks WHERE hash = ANY($1)" + (lock ? " ORDER BY hash FOR SHARE" : "")
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: access.logger)
        var found: Set<ContentHash> = []
        for try await hex in rows.decode(String.self) {
            if let hash = ContentHash(hex: hex) { found.insert(hash) }
        }
        return found
    }

    func get(_ hash: ContentHash) async throws -> [UInt8]? {
        let logger = access.logger
        return try await access.withConnection { connection in
            let rows = try await connection.query("SELECT bytes FROM cloud_chunks WHERE hash = \(hash.hex)", logger: logger)
            for try await row in rows { return try PostgresValues.bytes(row.makeRandomAccess()[0]) }
            return nil
        }
    }

    func sweep(storedBefore: Int64, keeping: Set<ContentHash>) async throws -> (chunks: Int, bytes: Int64) {
        try await access.transaction { connection in
            try await Self.sweep(storedBefore: storedBefore, keeping: keeping, on: connection, access: access)
        }
    }

    /// ``sweep(storedBefore:keeping:)`` in the caller's transaction.
    static func sweep(
        storedBefore: Int64, keeping: Set<ContentHash>, on connection: PostgresConnection, access: PostgresAccess
    ) async throws -> (chunks: Int, bytes: Int64) {
        var binds = PostgresBindings()
        binds.append(storedBefore)
        binds.append(keeping.map(\.hex))
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: "DELETE FROM cloud_chunks WHERE stored_at < $1 AND NOT (hash = ANY($2)) RETURNING size",
                binds: binds),
            logger: access.logger)
        var removed = 0
        var bytes: Int64 = 0
        for try await size in rows.decode(Int64.self) {
            removed += 1
            bytes += size
        }
        return (removed, bytes)
    }

    func totals() async throws -> (chunks: Int, bytes: Int64) {
        let logger = access.logger
        return try await access.withConnection { connection in
            let rows = try await connection.query(
                "SELECT COUNT(*), COALESCE(SUM(size), 0)::BIGINT FROM cloud_chunks", logger: logger)
            for try await (count, bytes) in rows.decode((Int64, Int64).self) { return (Int(count), bytes) }
            return (0, 0)
        }
    }
}
