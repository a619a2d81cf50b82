import DallyCore
import DallyObjects
import DallySync
import Foundation
import GRDB

extension ReplicaStore {
    /// Per table, the objects waiting to go up.
    public func objectUploadSummaries() async throws -> [ObjectUploadSummary] {
        try await pool.read { db in try Self.objectUploadSummaries(db: db) }
    }

    static func objectUploadSummaries(db: Database) throws -> [ObjectUploadSummary] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT tbl, COUNT(*), SUM(MAX(size - bytes_sent, 0)), MIN(first_dirty_at)
                FROM dally_object_uploads WHERE refused = 0 GROUP BY tbl ORDER BY tbl
                """
        ).map { ObjectUploadSummary(table: $0[0], objects: $0[1], bytes: $0[2], oldestFirstDirtyAt: $0[3]) }
    }

    /// The synced tables with `atomic_sync`, by name.
    var atomicTables: [String] {
        tables.values.filter { $0.schema.policy.atomicSync && !$0.schema.policy.localOnly }.map(\.schema.name).sorted()
    }

    /// The objects waiting to go up for `tables`, oldest first.
    public func objectUploads(tables: Set<String>, limit: Int = 1000) async throws -> [PendingObjectUpload] {
        guard !tables.isEmpty else { return [] }
        return try await pool.read { db in
            let marks = databaseQuestionMarks(count: tables.count)
            var arguments = StatementArguments(tables.sorted())
            arguments += [limit]
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT u.hash, u.tbl, u.size, u.bytes_sent, u.attempts, u.first_dirty_at, o.manifest, u.chunks_done
                    FROM dally_object_uploads u LEFT JOIN dally_objects o ON o.hash = u.hash
                    WHERE u.tbl IN (\(marks)) AND u.refused = 0 ORDER BY u.first_dirty_at, u.hash LIMIT ?
                    """,
                arguments: arguments
            ).compactMap { row -> PendingObjectUpload? in
                let hex: String = row[0]
                guard let hash = ContentHash(hex: hex) else { return nil }
                let size: Int64 = row[2]
                let manifest = (row[6] as Data?).flatMap { ObjectManifest(hash: hash, size: size, storage: $0) }
                return PendingObjectUpload(
                    upload: ObjectUpload(
                        hash: hash, table: row[1], firstDirtyAt: row[5], size: size, bytesSent: row[3], attempts: row[4]),
                    manifest: manifest, chunksDone: row[7])
            }
        }
    }

    /// Notes that a walk of `hash` began.
    ///
    /// - Returns: false when `hash` is no longer queued: a write let go of the object before
    ///   any row naming it left (see `ObjectLedger.setReferences`), so it is not to be sent.
    public func beginObjectUpload(_ hash: ContentHash) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE dally_object_uploads SET attempts = attempts + 1 WHERE hash = ?", arguments: [hash.hex])
            return db.changesCount > 0
        }
    }

    /// Adds chunk bytes sent for `hash`, and records that its first `chunksDone` distinct
    /// chunks are in the cloud (see ``PendingObjectUpload/chunksDone``).
    ///
    /// - Returns: false when `hash` is no longer queued (as for ``beginObjectUpload(_:)``): the
    ///   rest of the walk would be wasted bytes.
    public func recordObjectBytesSent(_ hash: ContentHash, bytes: Int64, chunksDone: Int) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE dally_object_uploads SET bytes_sent = bytes_sent + ?, chunks_done = ?
                    WHERE hash = ?
                    """,
                arguments: [bytes, chunksDone, hash.hex])
            return db.changesCount > 0
        }
    }

    /// The cloud holds `hash` whole: it leaves the upload queue, and rows of atomic tables that
    /// waited for it may go.
    public func objectUploaded(_ hash: ContentHash) async throws {
        try await groupCommit.perform(lane: .sync(.objects)) { db, _ in
            try db.execute(sql: "DELETE FROM dally_object_uploads WHERE hash = ?", arguments: [hash.hex])
            try db.execute(sql: "UPDATE dally_objects SET in_cloud = 1 WHERE hash = ?", arguments: [hash.hex])
        }
    }

    /// The cloud refused `hash` for good (`413 object_too_large`: over its `objects.max_bytes`):
    /// it leaves the upload queue's sight, and each row naming it gets an open `error` record
    /// in `/v1/conflicts` with the cloud's `code` and what to do. Settling a record (a smaller
    /// object written, or the cloud's limit raised) puts the row's objects back in the queue
    /// (``resolveConflict(table:id:_:)``); an object no row names any more is collected.
    ///
    /// - Returns: how many rows were told.
    @discardableResult
    public func refuseObjectUpload(_ hash: ContentHash, code: String, message: String) async throws -> Int {
        let tables = self.tables
        return try await groupCommit.perform(lane: .sync(.objects)) { db, context in
            try db.execute(sql: "UPDATE dally_object_uploads SET refused = 1 WHERE hash = ?", arguments: [hash.hex])
            var told = 0
            let refs = try Row.fetchAll(
                db, sql: "SELECT tbl, row_id, col FROM dally_object_refs WHERE hash = ? ORDER BY tbl, row_id, col",
                arguments: [hash.hex])
            for ref in refs {
                guard let table = tables[ref[0] as String] else { continue }
                let column: String = ref[2]
                let rejection = BatchAnswer.RowRejection(
                    code: code,
                    message: """
                        the cloud refused object \(hash.hex) of column '\(column)' (\(message)); write a smaller \
                        object, or raise the cloud's objects.max_bytes, then settle this record
                        """,
                    field: column)
                try ConflictLog.record(rejection, id: ref[1], table: table, now: context.now, db: db)
                told += 1
            }
            return told
        }
    }

    // MARK: Downloads

    /// The objects queued for download for `tables`, oldest first.
    public func objectDownloads(tables: Set<String>, limit: Int = 1000) async throws -> [ObjectDownload] {
        guard !tables.isEmpty else { return [] }
        return try await pool.read { db in
            let marks = databaseQuestionMarks(count: tables.count)
            var arguments = StatementArguments(tables.sorted())
            arguments += [limit]
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT hash, tbl, queued_at FROM dally_object_downloads
                    WHERE tbl IN (\(marks)) ORDER BY queued_at, hash LIMIT ?
                    """,
                arguments: arguments
            ).compactMap { row in
                let hex: String = row[0]
                return ContentHash(hex: hex).map { ObjectDownload(hash: $0, table: row[1], queuedAt: row[2]) }
            }
        }
    }

    /// Per table, the oldest queued download: when its download period started.
    static func objectDownloadsQueuedAt(db: Database) throws -> [String: Int64] {
        var oldest: [String: Int64] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT tbl, MIN(queued_at) FROM dally_object_downloads GROUP BY tbl") {
            oldest[row[0]] = row[1]
        }
        return oldest
    }

    /// Which of `hashes` have every chunk here.
    public func localObjects(_ hashes: [ContentHash]) async throws -> Set<ContentHash> {
        guard !hashes.isEmpty else { return [] }
        return try await pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT local FROM dally_objects WHERE hash = ?")
            var local: Set<ContentHash> = []
            for hash in hashes where try Int.fetchOne(statement, arguments: [hash.hex]) == 1 { local.insert(hash) }
            return local
        }
    }

    /// Records an object fetched from the cloud, whose chunks are all in the chunk store: it is
    /// local (and in the cloud), and leaves the download queue.
    public func objectFetched(_ manifest: ObjectManifest, now: Int64) async throws {
        try await groupCommit.perform(lane: .sync(.objects)) { db, _ in
            try ObjectLedger.recordLocal(manifest, now: now, db: db)
            try db.execute(sql: "UPDATE dally_objects SET in_cloud = 1 WHERE hash = ?", arguments: [manifest.hash.hex])
        }
    }
}

extension ReplicaStore {
    /// The cloud does not hold `hash` yet (its writer has not sent it): try again one download
    /// period from now rather than at every wake.
    public func deferObjectDownload(_ hash: ContentHash, now: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE dally_object_downloads SET queued_at = ? WHERE hash = ?", arguments: [now, hash.hex])
        }
    }
}
