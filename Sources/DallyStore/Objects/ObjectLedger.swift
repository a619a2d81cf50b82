import DallyCore
import DallyObjects
import Foundation
import GRDB

/// The SQL for the replica's object tables (`dally_objects`, `dally_object_refs`, the upload
/// and download queues), run inside the caller's transaction.
///
/// Row writers call it in the same transaction as the row, so that what GC keeps (the refs)
/// and what sync sends or fetches (the queues) can never disagree with the rows: a crash
/// loses both or neither.
enum ObjectLedger {
    static func record(_ hash: ContentHash, db: Database) throws -> ObjectRecord? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT size, chunk_count, manifest, local, in_cloud, created_at FROM dally_objects WHERE hash = ?"),
                arguments: [hash.hex])
        else { return nil }
        let size: Int64 = row[0]
        let chunkCount: Int = row[1]
        let packed: Data? = row[2]
        return ObjectRecord(
            reference: ObjectReference(hash: hash, size: size, chunks: chunkCount),
            manifest: packed.flatMap { ObjectManifest(hash: hash, size: size, storage: $0) },
            local: (row[3] as Int64) != 0, inCloud: (row[4] as Int64) != 0, createdAt: row[5])
    }

    /// Records an object whose chunks are all in the chunk store: new, or one known only by
    /// reference until now (its manifest and `local` are filled in and its download is no
    /// longer needed), or one held already (its manifest stays: its chunks are all here).
    ///
    /// `created_at` moves up to `now` either way, so that GC's grace runs from the latest
    /// upload: an old orphan uploaded again is a new promise to a client about to name it.
    static func recordLocal(_ manifest: ObjectManifest, now: Int64, db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO dally_objects (hash, size, chunk_count, manifest, local, in_cloud, created_at)
                VALUES (?, ?, ?, ?, 1, 0, ?)
                ON CONFLICT(hash) DO UPDATE SET
                    manifest = CASE WHEN local = 1 AND manifest IS NOT NULL THEN manifest ELSE excluded.manifest END,
                    chunk_count = CASE WHEN local = 1 AND manifest IS NOT NULL THEN chunk_count ELSE excluded.chunk_count END,
                    local = 1, created_at = MAX(created_at, excluded.created_at)
                """
        ).execute(arguments: [
            manifest.hash.hex, manifest.size, manifest.chunks.count, Data(manifest.storageBytes), now,
        ])
        try db.cachedStatement(sql: "DELETE FROM dally_object_downloads WHERE hash = ?").execute(arguments: [
            manifest.hash.hex
        ])
    }

    /// Records an object a downstream row references, unless it is known: the cloud holds it,
    /// this gateway does not yet.
    static func recordRemote(_ reference: ObjectReference, now: Int64, db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO dally_objects (hash, size, chunk_count, manifest, local, in_cloud, created_at)
                VALUES (?, ?, ?, NULL, 0, 1, ?) ON CONFLICT(hash) DO NOTHING
                """
        ).execute(arguments: [reference.hash.hex, reference.size, reference.chunks, now])
    }

    /// Makes the refs of row `rowID` exactly `refs` (none for a deleted row).
    ///
    /// An object this row referenced and no row references any more is no longer fetched: a
    /// photo replaced before its download period came costs no bytes (a read that names it
    /// still fetches it on demand). Nor is it sent, unless a row version naming it has already
    /// left in a batch (`announced`): a photo retaken before wifi came is sent once, the last
    /// time, while an object the cloud may have a row for is still completed there.
    static func setReferences(
        table: String, rowID: String, _ refs: [(column: String, reference: ObjectReference)], db: Database
    ) throws {
        let before = try String.fetchAll(
            db.cachedStatement(sql: "SELECT hash FROM dally_object_refs WHERE tbl = ? AND row_id = ?"),
            arguments: [table, rowID])
        try db.cachedStatement(sql: "DELETE FROM dally_object_refs WHERE tbl = ? AND row_id = ?")
            .execute(arguments: [table, rowID])
        let insert = try db.cachedStatement(
            sql: "INSERT INTO dally_object_refs (tbl, row_id, col, hash) VALUES (?, ?, ?, ?)")
        for ref in refs { try insert.execute(arguments: [table, rowID, ref.column, ref.reference.hash.hex]) }
        guard !before.isEmpty else { return }
        let dropDownload = try db.cachedStatement(
            sql: """
                DELETE FROM dally_object_downloads WHERE hash = ?
                AND NOT EXISTS (SELECT 1 FROM dally_object_refs r WHERE r.hash = dally_object_downloads.hash)
                """)
        let dropUpload = try db.cachedStatement(
            sql: """
                DELETE FROM dally_object_uploads WHERE hash = ? AND (announced = 0 OR refused = 1)
                AND NOT EXISTS (SELECT 1 FROM dally_object_refs r WHERE r.hash = dally_object_uploads.hash)
                """)
        for hash in Set(before) {
            try dropDownload.execute(arguments: [hash])
            try dropUpload.execute(arguments: [hash])
        }
    }

    /// Queues `hash` for upload under `table`'s object policy if the cloud may lack it and it
    /// is not queued yet (the first queueing table and time stay).
    static func queueUpload(_ hash: ContentHash, table: String, now: Int64, db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO dally_object_uploads (hash, tbl, first_dirty_at, size, bytes_sent, attempts, announced)
                SELECT hash, ?, ?, size, 0, 0, 0 FROM dally_objects WHERE hash = ? AND in_cloud = 0
                ON CONFLICT(hash) DO NOTHING
                """
        ).execute(arguments: [table, now, hash.hex])
    }

    /// Queues for upload every object `table`'s rows name that the cloud does not hold: the
    /// rows of a table that was local-only, now queued to go up (``LocalRowsQueue``).
    static func queueUploads(ofTable table: String, now: Int64, db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO dally_object_uploads (hash, tbl, first_dirty_at, size, bytes_sent, attempts, announced)
                SELECT hash, ?1, ?2, size, 0, 0, 0 FROM dally_objects
                WHERE in_cloud = 0 AND hash IN (SELECT hash FROM dally_object_refs WHERE tbl = ?1)
                ON CONFLICT(hash) DO NOTHING
                """,
            arguments: [table, now])
    }

    /// Marks the uploads of the objects that the rows of `batch` name as announced: the batch
    /// is about to leave, and the cloud may keep those rows whatever happens here next.
    static func announceUploads(inBatch batch: String, db: Database) throws {
        try db.cachedStatement(
            sql: """
                UPDATE dally_object_uploads SET announced = 1 WHERE announced = 0 AND hash IN (
                    SELECT f.hash FROM dally_inflight_ids i, json_each(i.ids) AS j
                    JOIN dally_object_refs f ON f.tbl = i.tbl AND f.row_id = j.value
                    WHERE i.batch = ?)
                """
        ).execute(arguments: [batch])
    }

    /// Queues `hash` for download under `table`'s object policy if it is not here and not
    /// queued yet.
    static func queueDownload(_ hash: ContentHash, table: String, now: Int64, db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO dally_object_downloads (hash, tbl, queued_at)
                SELECT hash, ?, ? FROM dally_objects WHERE hash = ? AND local = 0
                ON CONFLICT(hash) DO NOTHING
                """
        ).execute(arguments: [table, now, hash.hex])
    }

    /// Deletes the objects created before `cutoff` that no row references and no queue holds;
    /// returns how many went.
    static func deleteUnreferenced(createdBefore cutoff: Int64, db: Database) throws -> Int {
        try db.execute(
            sql: """
                DELETE FROM dally_objects WHERE created_at < ?
                AND NOT EXISTS (SELECT 1 FROM dally_object_refs r WHERE r.hash = dally_objects.hash)
                AND NOT EXISTS (SELECT 1 FROM dally_object_uploads u WHERE u.hash = dally_objects.hash)
                AND NOT EXISTS (SELECT 1 FROM dally_object_downloads d WHERE d.hash = dally_objects.hash)
                """,
            arguments: [cutoff])
        return db.changesCount
    }

    /// Every chunk a stored manifest lists: what the chunk sweep keeps.
    ///
    /// - Throws: ``StoreError`` for a manifest that does not unpack, rather than leave its
    ///   chunks out of the set and let the sweep delete them.
    static func listedChunks(db: Database) throws -> Set<ContentHash> {
        var listed: Set<ContentHash> = []
        let rows = try Row.fetchCursor(
            db, sql: "SELECT hash, size, manifest FROM dally_objects WHERE manifest IS NOT NULL")
        while let row = try rows.next() {
            let hex: String = row[0]
            guard let hash = ContentHash(hex: hex), let packed: Data = row[2],
                let manifest = ObjectManifest(hash: hash, size: row[1], storage: packed)
            else { throw StoreError("the manifest of object \(hex) does not unpack; not sweeping chunks") }
            for chunk in manifest.chunks { listed.insert(chunk.hash) }
        }
        return listed
    }
}
