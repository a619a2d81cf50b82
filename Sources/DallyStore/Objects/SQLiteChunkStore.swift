import DallyObjects
import Foundation
import GRDB

/// Chunks in their own SQLite file (`chunks.sqlite`, WAL) beside a store's database: the
/// ``ChunkStore`` of the gateway and of the embedded cloud.
///
/// A separate file keeps megabyte-sized blob writes off the row database's single writer and
/// out of its write-ahead log, so a large upload does not hold up row writes. Keys are the
/// 32 hash bytes, never a path: nothing a client sends names a file.
///
/// Open it after the store that owns the directory (whose lock covers this file too).
public final class SQLiteChunkStore: ChunkStore {
    public let path: String
    package let pool: DatabasePool

    /// Opens (creating if needed) `chunks.sqlite` in `directory`.
    public static func open(directory: String, synchronousFull: Bool = true) throws -> SQLiteChunkStore {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronousFull ? "FULL" : "NORMAL")")
        }
        configuration.maximumReaderCount = 4
        let path = directory + "/chunks.sqlite"
        let pool = try DatabasePool(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("chunks-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE chunks (
                        hash BLOB NOT NULL PRIMARY KEY,
                        size INTEGER NOT NULL,
                        stored_at INTEGER NOT NULL,
                        data BLOB NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        try migrator.migrate(pool)
        return SQLiteChunkStore(path: path, pool: pool)
    }

    private init(path: String, pool: DatabasePool) {
        self.path = path
        self.pool = pool
    }

    /// A chunk already stored has its stored time moved up to `now`: an upload that reuses an
    /// old chunk no manifest lists yet must not see the sweep delete it before its manifest is
    /// recorded. (Insert and refresh are one transaction, so a sweep runs wholly before it —
    /// and the chunk is stored anew — or wholly after.)
    ///
    /// - Throws: `insufficient_storage` when the disk is full (``FullDisk``).
    public func put(_ hash: ContentHash, bytes: [UInt8], now: Int64) async throws -> Bool {
        do {
            return try await pool.write { db in
                try db.execute(
                    sql: "INSERT INTO chunks (hash, size, stored_at, data) VALUES (?, ?, ?, ?) ON CONFLICT(hash) DO NOTHING",
                    arguments: [Data(hash.bytes), bytes.count, now, Data(bytes)])
                if db.changesCount > 0 { return true }
                try db.execute(
                    sql: "UPDATE chunks SET stored_at = ? WHERE hash = ? AND stored_at < ?",
                    arguments: [now, Data(hash.bytes), now])
                return false
            }
        } catch {
            throw FullDisk.refusal(
                for: error,
                "the disk holding the chunk store is full: the chunk was not saved (reads go on). Free space in the data directory's filesystem, then send it again")
        }
    }

    public func present(_ hashes: [ContentHash]) async throws -> Set<ContentHash> {
        guard !hashes.isEmpty else { return [] }
        return try await pool.read { db in try Self.present(hashes, db: db) }
    }

    /// ``present(_:)`` on a connection the caller holds: for a store that must check chunks
    /// inside a step of its own (the cloud records an object only with its chunks there).
    package static func present(_ hashes: [ContentHash], db: Database) throws -> Set<ContentHash> {
        var found: Set<ContentHash> = []
        let statement = try db.cachedStatement(sql: "SELECT 1 FROM chunks WHERE hash = ?")
        for hash in hashes where try Bool.fetchOne(statement, arguments: [Data(hash.bytes)]) != nil {
            found.insert(hash)
        }
        return found
    }

    public func get(_ hash: ContentHash) async throws -> [UInt8]? {
        try await pool.read { db in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT data FROM chunks WHERE hash = ?"), arguments: [Data(hash.bytes)])
                .map { Array($0) }
        }
    }

    public func sweep(storedBefore: Int64, keeping: Set<ContentHash>) async throws -> (chunks: Int, bytes: Int64) {
        try await pool.write { db in try Self.sweep(storedBefore: storedBefore, keeping: keeping, db: db) }
    }

    /// ``sweep(storedBefore:keeping:)`` on the writer connection the caller holds.
    package static func sweep(storedBefore: Int64, keeping: Set<ContentHash>, db: Database) throws -> (chunks: Int, bytes: Int64) {
        let candidates = try Row.fetchAll(
            db, sql: "SELECT hash, size FROM chunks WHERE stored_at < ?", arguments: [storedBefore])
        var removed = 0
        var bytes: Int64 = 0
        let delete = try db.cachedStatement(sql: "DELETE FROM chunks WHERE hash = ?")
        for row in candidates {
            let data: Data = row[0]
            guard let hash = ContentHash(digest: data), !keeping.contains(hash) else { continue }
            try delete.execute(arguments: [data])
            removed += 1
            bytes += row[1]
        }
        return (removed, bytes)
    }

    public func totals() async throws -> (chunks: Int, bytes: Int64) {
        try await pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM chunks")
            return (row?[0] ?? 0, row?[1] ?? 0)
        }
    }

    /// Bytes on disk of the file and its log.
    public var sizeOnDisk: Int64 { DatabaseFiles.bytes(of: path) }

    public func close() throws { try pool.close() }
}
