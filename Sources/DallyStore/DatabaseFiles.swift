import Foundation

/// The files SQLite keeps for one database in WAL mode.
enum DatabaseFiles {
    /// Bytes on disk of the database and its write-ahead log.
    static func bytes(of path: String) -> Int64 {
        [path, path + "-wal"].reduce(0) { total, path in
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
            return total + (size ?? 0)
        }
    }
}
