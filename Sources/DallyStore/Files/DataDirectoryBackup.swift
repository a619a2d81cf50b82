import Foundation
import GRDB

/// Copies the databases of a data directory while the server using it runs, with SQLite's
/// online backup: each copy is a consistent snapshot, and writers are not blocked while it
/// is taken (`dally backup`).
///
/// A gateway's replica is copied before its chunk store: every object the replica records
/// had its chunks stored first, so the later chunk copy holds them all. To restore, stop the
/// server and put the copied files in place of its data directory's (docs/OPERATIONS.md).
///
/// ```swift
/// let copied = try DataDirectoryBackup.copy(from: "/var/lib/dally", to: "/backup/dally-2026-11-25")
/// ```
public enum DataDirectoryBackup {
    /// The databases a data directory may hold, in the order they are copied.
    public static let databaseNames = ["replica.sqlite", "chunks.sqlite", "cloud.sqlite"]

    /// One database copied: its file name and size.
    public struct Copy: Sendable, Equatable {
        public let name: String
        public let bytes: Int64
    }

    /// - Throws: ``StoreError`` when `directory` holds no Dally database, `destination` is not
    ///   empty, or a copy fails its integrity check.
    public static func copy(from directory: String, to destination: String) throws -> [Copy] {
        let present = databaseNames.filter { FileManager.default.fileExists(atPath: directory + "/" + $0) }
        guard !present.isEmpty else {
            throw StoreError(
                "\(directory) holds no Dally database (\(databaseNames.joined(separator: ", "))): is it the server's data_dir? "
                    + "(A cloud on PostgreSQL keeps its data there: back it up with pg_dump, docs/OPERATIONS.md.)")
        }
        do {
            try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        } catch {
            throw StoreError("cannot create \(destination): \(error.localizedDescription)")
        }
        // Empty, not only free of the databases' names: a `-wal` left beside a copy by an
        // earlier backup or restore would be read into the new copy when it is opened.
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? []
        if let first = entries.sorted().first {
            throw StoreError(
                "\(destination) is not empty (it holds \(first)\(entries.count > 1 ? " and \(entries.count - 1) more" : "")); "
                    + "back up into an empty or new directory")
        }
        return try present.map { name in
            let target = destination + "/" + name
            // Read-only, and still reading the commits in the write-ahead log (the running
            // server's -shm is there): the copy has every commit made before it began.
            var reading = Configuration()
            reading.readonly = true
            let source = try DatabaseQueue(path: directory + "/" + name, configuration: reading)
            let copy = try DatabaseQueue(path: target)
            try source.backup(to: copy)
            let verdict = try copy.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") }
            try copy.close()
            try source.close()
            guard verdict == "ok" else {
                throw StoreError("the copy of \(name) fails SQLite's integrity check: \(verdict ?? "no answer")")
            }
            return Copy(name: name, bytes: DatabaseFiles.bytes(of: target))
        }
    }
}
