import ArgumentParser
import DallyLogging
import DallyStore
import Foundation

/// `dally backup --data-dir DIR --to DIR`: a consistent copy of a server's databases, taken
/// while it runs.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy a gateway's or cloud's databases while it runs (SQLite online backup).",
        discussion: """
            To restore: stop the server, move its data directory aside, and put the copied files \
            in a data directory of the same path (docs/OPERATIONS.md).
            """
    )

    @Option(name: .long, help: "The server's data directory (its [server] data_dir).")
    var dataDir: String

    @Option(name: .long, help: "An empty or new directory to copy the databases into.")
    var to: String

    func run() throws {
        do {
            for copy in try DataDirectoryBackup.copy(from: dataDir, to: to) {
                print("\(to)/\(copy.name): \(copy.bytes) bytes, integrity ok")
            }
        } catch let error as StoreError {
            StandardError.line("dally: backup failed: \(error)")
            throw ExitCode(1)
        }
    }
}
