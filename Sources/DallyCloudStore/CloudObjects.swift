import DallyCore
import DallyObjects
import DallySync
import Foundation
import DallyStore
import GRDB

/// The cloud's objects: `cloud_objects` lists the objects held complete (a manifest is
/// recorded only once every chunk it lists is in the chunk store and they hash to the object's
/// hash), and a collection removes what no row needs any more.
///
/// Two rules keep an object complete for as long as it is listed. Recording a manifest checks
/// its chunks inside the writer's transaction, and the chunk sweep runs while holding the
/// writer too, so a manifest cannot be recorded between the sweep's reading which chunks are
/// listed and its deleting the others. And objects are deleted in a transaction of their own
/// before the sweep, so a sweep never follows a deletion that was rolled back.
extension SQLiteCloudStore {
    /// `hash` is the 64 lowercase hex digits; `manifest` is ``ObjectManifest/storageBytes``.
    /// A rowid table: a manifest of many chunks is a large row, which a `WITHOUT ROWID`
    /// table's b-tree holds badly.
    static let createObjects = """
        CREATE TABLE cloud_objects (
            hash TEXT NOT NULL PRIMARY KEY,
            size INTEGER NOT NULL,
            chunk_count INTEGER NOT NULL,
            manifest BLOB NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX cloud_objects_created_at ON cloud_objects(created_at);
        """

    /// Whether an object is held complete, by hex hash: the batch applier's check for rows of
    /// `atomic_sync` tables.
    static let selectObjectHeld = "SELECT 1 FROM cloud_objects WHERE hash = ?"

    public var chunks: any ChunkStore { chunkStore }

    public func storeObject(_ manifest: ObjectManifest, now: Int64) async throws -> ObjectOffer {
        let chunkPool = chunkStore.pool
        var seen: Set<ContentHash> = []
        let listed = manifest.chunks.map(\.hash).filter { seen.insert($0).inserted }
        return try await writing { db in
            if try Bool.fetchOne(db.cachedStatement(sql: Self.selectObjectHeld), arguments: [manifest.hash.hex]) != nil {
                return .alreadyStored
            }
            // Checked while this transaction holds the writer, which a collection's sweep
            // holds too: the chunks found here stay until the object is committed.
            let present = try chunkPool.read { chunkDB in try SQLiteChunkStore.present(listed, db: chunkDB) }
            let missing = listed.filter { !present.contains($0) }
            guard missing.isEmpty else { return .missing(missing) }
            try db.execute(
                sql: "INSERT INTO cloud_objects (hash, size, chunk_count, manifest, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [manifest.hash.hex, manifest.size, manifest.chunks.count, Data(manifest.storageBytes), now])
            return .stored
        }
    }

    public func manifest(of hash: ContentHash) async throws -> ObjectManifest? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT size, manifest FROM cloud_objects WHERE hash = ?", arguments: [hash.hex])
            else { return nil }
            guard let manifest = ObjectManifest(hash: hash, size: row[0], storage: row[1] as Data) else {
                throw StoreError("the stored manifest of object \(hash.hex) is damaged")
            }
            return manifest
        }
    }

    public func completeObjects(_ hashes: [ContentHash]) async throws -> Set<ContentHash> {
        guard !hashes.isEmpty else { return [] }
        return try await pool.read { db in
            let statement = try db.cachedStatement(sql: Self.selectObjectHeld)
            var held: Set<ContentHash> = []
            for hash in hashes where try Bool.fetchOne(statement, arguments: [hash.hex]) != nil { held.insert(hash) }
            return held
        }
    }

    public func collectObjects(before cutoff: Int64) async throws -> ObjectCollection {
        var collection = ObjectCollection()
        let referenced = Self.referencedHashes(tables.values.sorted { $0.schema.name < $1.schema.name })
        collection.objects = try await writing { db in
            if let referenced {
                try db.execute(
                    sql: "DELETE FROM cloud_objects WHERE created_at < ? AND hash NOT IN (\(referenced))",
                    arguments: [cutoff])
            } else {
                try db.execute(sql: "DELETE FROM cloud_objects WHERE created_at < ?", arguments: [cutoff])
            }
            return db.changesCount
        }
        let chunkPool = chunkStore.pool
        let swept = try await writing { db in
            let keeping = try Self.listedChunks(db)
            return try chunkPool.write { chunkDB in
                try SQLiteChunkStore.sweep(storedBefore: cutoff, keeping: keeping, db: chunkDB)
            }
        }
        collection.chunks = swept.chunks
        collection.chunkBytes = swept.bytes
        return collection
    }

    /// A query for the hashes (lowercase hex) that rows' OBJECT columns reference, across
    /// `tables`; nil when no table has an OBJECT column. A value that is not JSON (a reference
    /// string from before references were objects) references nothing, and nulls are left out
    /// so that `NOT IN` stays true for unreferenced objects.
    static func referencedHashes(_ tables: [CloudTableSQL]) -> String? {
        var selects: [String] = []
        for table in tables {
            for (column, sqlColumn) in zip(table.schema.columns, table.sqlColumns) where column.type == .object {
                selects.append(
                    "SELECT CASE WHEN json_valid(\(sqlColumn)) THEN lower(json_extract(\(sqlColumn), '$.hash')) END AS h "
                        + "FROM \(table.sqlTable) WHERE \(sqlColumn) IS NOT NULL")
            }
        }
        guard !selects.isEmpty else { return nil }
        return "SELECT h FROM (\(selects.joined(separator: " UNION ALL "))) WHERE h IS NOT NULL"
    }

    /// Every chunk the remaining objects list.
    ///
    /// - Throws: ``StoreError`` for a damaged manifest: sweeping without knowing all of an
    ///   object's chunks could delete some of them.
    private static func listedChunks(_ db: Database) throws -> Set<ContentHash> {
        var listed: Set<ContentHash> = []
        let rows = try Row.fetchCursor(db, sql: "SELECT hash, size, manifest FROM cloud_objects")
        while let row = try rows.next() {
            let hex: String = row[0]
            guard let hash = ContentHash(hex: hex), let manifest = ObjectManifest(hash: hash, size: row[1], storage: row[2] as Data)
            else {
                throw StoreError("the stored manifest of object \(hex) is damaged; no chunk was swept")
            }
            for chunk in manifest.chunks { listed.insert(chunk.hash) }
        }
        return listed
    }
}
