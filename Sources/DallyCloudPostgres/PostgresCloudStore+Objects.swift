import DallyCore
import DallyObjects
import DallySync
import PostgresNIO

/// The cloud's objects in PostgreSQL: `cloud_objects` lists the objects held complete, and a
/// collection removes what no row needs any more.
///
/// Table locks keep an object complete for as long as it is listed, across nodes. Recording a
/// manifest takes `cloud_objects` in ROW EXCLUSIVE mode and locks the chunks it found; a
/// collection takes `cloud_objects` in EXCLUSIVE mode, which waits for both, and for every
/// batch that locked (`FOR SHARE`) an object its rows reference, and keeps them all out until
/// it commits. So a collection never deletes an object a committed or committing row
/// references, nor a chunk a recorded object lists.
extension PostgresCloudStore {
    public var chunks: any ChunkStore { chunkStore }

    public func storeObject(_ manifest: ObjectManifest, now: Int64) async throws -> ObjectOffer {
        var seen: Set<ContentHash> = []
        let listed = manifest.chunks.map(\.hash).filter { seen.insert($0).inserted }
        let access = self.access
        return try await access.transaction { connection in
            try await connection.query("LOCK TABLE cloud_objects IN ROW EXCLUSIVE MODE", logger: access.logger)
            let held = try await connection.query(
                "SELECT 1 FROM cloud_objects WHERE hash = \(manifest.hash.hex)", logger: access.logger)
            for try await _ in held { return .alreadyStored }
            var present: Set<ContentHash> = []
            if !listed.isEmpty {
                present = try await PostgresChunkStore.present(listed, lock: true, on: connection, access: access)
            }
            let missing = listed.filter { !present.contains($0) }
            guard missing.isEmpty else { return .missing(missing) }
            let inserted = try await connection.query(
                """
                INSERT INTO cloud_objects (hash, size, chunk_count, manifest, created_at) \
                VALUES (\(manifest.hash.hex), \(manifest.size), \(Int64(manifest.chunks.count)), \
                \(ByteBuffer(bytes: manifest.storageBytes)), \(now)) ON CONFLICT (hash) DO NOTHING RETURNING 1
                """, logger: access.logger)
            for try await _ in inserted { return .stored }
            return .alreadyStored
        }
    }

    public func manifest(of hash: ContentHash) async throws -> ObjectManifest? {
        let logger = access.logger
        return try await access.withConnection { connection in
            let rows = try await connection.query(
                "SELECT size, manifest FROM cloud_objects WHERE hash = \(hash.hex)", logger: logger)
            for try await row in rows {
                let cells = row.makeRandomAccess()
                guard
                    let manifest = ObjectManifest(
                        hash: hash, size: try cells[0].decode(Int64.self), storage: try PostgresValues.bytes(cells[1]))
                else {
                    throw DallyError(.storage, "the stored manifest of object \(hash.hex) is damaged")
                }
                return manifest
            }
            return nil
        }
    }

    public func completeObjects(_ hashes: [ContentHash]) async throws -> Set<ContentHash> {
        guard !hashes.isEmpty else { return [] }
        let logger = access.logger
        return try await access.withConnection { connection in
            var binds = PostgresBindings()
            binds.append(hashes.map(\.hex))
            let rows = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT hash FROM cloud_objects WHERE hash = ANY($1)", binds: binds),
                logger: logger)
            var held: Set<ContentHash> = []
            for try await hex in rows.decode(String.self) {
                if let hash = ContentHash(hex: hex) { held.insert(hash) }
            }
            return held
        }
    }

    public func collectObjects(before cutoff: Int64) async throws -> ObjectCollection {
        let referenced = Self.referencedHashes(tables.values.sorted { $0.schema.name < $1.schema.name })
        let access = self.access
        return try await access.transaction { connection in
            try await connection.query("LOCK TABLE cloud_objects IN EXCLUSIVE MODE", logger: access.logger)
            var collection = ObjectCollection()
            let sql = referenced.map {
                "DELETE FROM cloud_objects WHERE created_at < $1 AND hash NOT IN (\($0)) RETURNING 1"
            } ?? "DELETE FROM cloud_objects WHERE created_at < $1 RETURNING 1"
            var binds = PostgresBindings()
            binds.append(cutoff)
            for try await _ in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: access.logger) {
                collection.objects += 1
            }
            var keeping: Set<ContentHash> = []
            let rows = try await connection.query("SELECT hash, size, manifest FROM cloud_objects", logger: access.logger)
            for try await row in rows {
                let cells = row.makeRandomAccess()
                let hex = try cells[0].decode(String.self)
                guard let hash = ContentHash(hex: hex),
                    let manifest = ObjectManifest(
                        hash: hash, size: try cells[1].decode(Int64.self), storage: try PostgresValues.bytes(cells[2]))
                else {
                    throw DallyError(.storage, "the stored manifest of object \(hex) is damaged; no chunk was swept")
                }
                for chunk in manifest.chunks { keeping.insert(chunk.hash) }
            }
            let swept = try await PostgresChunkStore.sweep(
                storedBefore: cutoff, keeping: keeping, on: connection, access: access)
            collection.chunks = swept.chunks
            collection.chunkBytes = swept.bytes
            return collection
        }
    }

    /// A query for the hashes (lowercase hex) that rows' OBJECT columns reference, across
    /// `tables`; nil when no table has an OBJECT column. The hash is found in the reference's
    /// JSON text with a pattern, so a value that is not a reference object (a string from
    /// before references were objects) references nothing, as in the SQLite store.
    static func referencedHashes(_ tables: [PostgresTableSQL]) -> String? {
        var selects: [String] = []
        for table in tables {
            for (column, sqlColumn) in zip(table.schema.columns, table.sqlColumns) where column.type == .object {
                selects.append(
                    "SELECT lower(substring(\(sqlColumn) from '\"hash\"\\s*:\\s*\"([0-9A-Fa-f]{64})\"')) AS h "
                        + "FROM \(table.sqlTable) WHERE \(sqlColumn) IS NOT NULL")
            }
        }
        guard !selects.isEmpty else { return nil }
        return "SELECT h FROM (\(selects.joined(separator: " UNION ALL "))) AS referenced WHERE h IS NOT NULL"
    }
}
