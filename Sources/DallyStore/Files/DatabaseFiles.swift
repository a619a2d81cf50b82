import Foundation
import GRDB

/// The files SQLite keeps for one database in WAL mode.
package enum DatabaseFiles {
    /// Bytes on disk of the database and its write-ahead log.
    package static func bytes(of path: String) -> Int64 {
        [path, path + "-wal"].reduce(0) { total, path in
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
            return total + (size ?? 0)
        }
    }

    /// Creates `directory` if needed, locks it against a second process and opens the database
    /// file `name` in it as a WAL pool with the given `synchronous` mode.
    ///
    /// - Parameters:
    ///   - pragmas: further statements run on every connection.
    ///   - writerStatements: further statements run on the writer's connection only, as it opens:
    ///     pragmas, and temporary tables that live as long as the connection.
    package static func openPool(
        directory: String, name: String, synchronousFull: Bool, pragmas: [String] = [], writerStatements: [String] = []
    ) throws -> (pool: DatabasePool, path: String, lock: DataDirectoryLock) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError("cannot create data directory \(directory): \(error.localizedDescription)")
        }
        let lock = try DataDirectoryLock(directory: directory)
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronousFull ? "FULL" : "NORMAL")")
            for pragma in pragmas { try db.execute(sql: pragma) }
            // A pool opens its readers read-only.
            if !db.configuration.readonly {
                for statement in writerStatements { try db.execute(sql: statement) }
            }
        }
        configuration.maximumReaderCount = 4
        let path = directory + "/" + name
        do {
            return (try DatabasePool(path: path, configuration: configuration), path, lock)
        } catch {
            lock.release()
            throw error
        }
    }
}
