import DallyCore
import DallyObjects
import GRDB

extension ReplicaStore {
    // MARK: - Objects: reads

    /// What the replica knows of object `hash`; nil when it knows nothing.
    public func object(_ hash: ContentHash) async throws -> ObjectRecord? {
        try await pool.read { db in try ObjectLedger.record(hash, db: db) }
    }

    /// The objects row `id` of `table` references, by column.
    public func objectRefs(table: String, id: String) async throws -> [ObjectRef] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT col, hash FROM dally_object_refs WHERE tbl = ? AND row_id = ? ORDER BY col",
                arguments: [table, id]
            ).compactMap { row in
                ContentHash(hex: row[1] as String).map { ObjectRef(table: table, rowID: id, column: row[0], hash: $0) }
            }
        }
    }

    /// The upload queue, oldest first.
    public func objectUploads() async throws -> [ObjectUpload] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT hash, tbl, first_dirty_at, size, bytes_sent, attempts FROM dally_object_uploads
                    ORDER BY first_dirty_at, hash
                    """
            ).compactMap { row in
                ContentHash(hex: row[0] as String).map {
                    ObjectUpload(
                        hash: $0, table: row[1], firstDirtyAt: row[2], size: row[3], bytesSent: row[4], attempts: row[5])
                }
            }
        }
    }

    /// The download queue, oldest first.
    public func objectDownloads() async throws -> [ObjectDownload] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT hash, tbl, queued_at FROM dally_object_downloads ORDER BY queued_at, hash")
                .compactMap { row in
                    ContentHash(hex: row[0] as String).map { ObjectDownload(hash: $0, table: row[1], queuedAt: row[2]) }
                }
        }
    }

    /// How many objects the replica knows, and how many are whole here.
    public func objectTotals() async throws -> ObjectTotals {
        try await pool.read { db in try Self.objectTotals(db: db) }
    }

    static func objectTotals(db: Database) throws -> ObjectTotals {
        let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), COALESCE(SUM(local), 0) FROM dally_objects")
        let refused = try Int64.fetchOne(db, sql: "SELECT COUNT(*) FROM dally_object_uploads WHERE refused = 1") ?? 0
        return ObjectTotals(objects: row?[0] ?? 0, local: row?[1] ?? 0, refused: refused)
    }

    // MARK: - Objects: writes

    /// Refuses a local write, `507 insufficient_storage`, while the data directory's filesystem
    /// is under `store.min_free_bytes` or the replica at `store.max_bytes`: what every local row
    /// write is held to, asked before an object's bytes are stored, so that an upload the row
    /// write would refuse leaves no chunks behind to fill the disk.
    public func requireRoomForLocalWrites() throws(DallyError) {
        try groupCommit.requireRoom()
    }

    /// Records an object whose chunks are now all in the chunk store — one a client uploaded
    /// (`POST /v1/objects`) or one fetched from the cloud — and returns its reference. A row
    /// write may name it from then on; it leaves the download queue.
    ///
    /// Callers store every chunk (durably) first: the record is the promise that they are there.
    @discardableResult
    public func recordLocalObject(_ manifest: ObjectManifest) async throws -> ObjectReference {
        try await groupCommit.perform { db, context in
            try ObjectLedger.recordLocal(manifest, now: context.now, db: db)
            return manifest.reference
        }
    }

    /// Records an object just received and sets `column` of row `id` to it, in one transaction:
    /// the row keeps its other columns (a patch), or is created with them null. Commit
    /// observers, the change feed and the outbox see it as any row write.
    ///
    /// - Parameters:
    ///   - expectedSeq: as for ``write(_:table:)``.
    ///   - requiresExisting: the row must exist, as ``RowWrite/requiresExisting``.
    ///   - clientScope: the writing token's scope, as ``RowWrite/clientScope``.
    /// - Throws: ``DallyError`` `object_column` when `column` is not an `OBJECT` column,
    ///   `version_mismatch`; a refused write records nothing, not even the object.
    public func writeObject(
        _ manifest: ObjectManifest, table: String, id: String, column: String, expectedSeq: Int64?,
        requiresExisting: Bool = false, clientScope: TypedScope? = nil
    ) async throws -> ObjectWriteOutcome {
        let sql = try tableSQL(table)
        let index = try Self.objectColumn(column, of: sql.schema)
        return try await groupCommit.perform { db, context in
            try ObjectLedger.recordLocal(manifest, now: context.now, db: db)
            let current = try Row.fetchOne(db.cachedStatement(sql: sql.selectByID), arguments: [id])
                .map { RowDecoding.storedRow($0, schema: sql.schema) }
            let exists = current.map { !$0.deleted } ?? false
            var write = RowWrite(
                id: id, kind: exists ? .patch : .put, values: [(index, .json(manifest.reference.jsonText))],
                updatedAt: nil, expectedSeq: expectedSeq)
            write.requiresExisting = requiresExisting
            write.clientScope = clientScope
            let outcome = try RowWriter.apply(write, table: sql, db: db, context: &context)
            return ObjectWriteOutcome(row: outcome.row, created: !exists)
        }
    }

    /// The position of `column` in `schema`, which must be an `OBJECT` column.
    ///
    /// - Throws: ``DallyError`` `unknown_column` or `object_column`.
    public static func objectColumn(_ column: String, of schema: TableSchema) throws(DallyError) -> Int {
        guard let index = schema.columnIndex(column) else {
            throw DallyError(.unknownColumn, "table '\(schema.name)' has no column '\(column)'", field: "column")
        }
        guard schema.columns[index].type == .object else {
            throw DallyError(
                .objectColumn,
                "column '\(column)' of '\(schema.name)' is \(schema.columns[index].type.rawValue), not OBJECT; write it in the row's values",
                field: "column")
        }
        return index
    }

    /// Deletes the objects created before `cutoff` (ms since 1970) that no row references and
    /// no upload or download waits for, and lists the chunks the remaining manifests hold.
    /// One half of a GC pass; ``ObjectCollector`` runs both.
    public func collectObjects(createdBefore cutoff: Int64) async throws -> ReplicaObjectCollection {
        let collected = try await pool.write { db in try ObjectLedger.deleteUnreferenced(createdBefore: cutoff, db: db) }
        // Read after the delete: a manifest committed meanwhile is listed too, which only keeps more.
        let listed = try await pool.read { db in try ObjectLedger.listedChunks(db: db) }
        return ReplicaObjectCollection(collected: collected, listedChunks: listed)
    }
}
