import DallyCore
import DallySync
import Foundation
import Synchronization
import Testing

import DallyCloudPostgres
import DallyCloudStore
import DallyConfig
import DallyTestSupport
import Logging
import DallyStore

/// A table of the Fixtures' shape with a chosen conflict policy.
func cloudTable(_ name: String, _ columns: [(String, ColumnType)], conflict: ConflictPolicy) -> TableSchema {
    let base = table(name, columns)
    return TableSchema(name: base.name, columns: base.columns, conflict: conflict, policy: base.policy)
}

/// One table per conflict policy, all `(body TEXT, n INTEGER)`.
let serverWinsTable = cloudTable("sw", [("body", .text), ("n", .integer)], conflict: .serverWins)
let clientWinsTable = cloudTable("cw", [("body", .text), ("n", .integer)], conflict: .clientWins)
let lastWriterWinsTable = cloudTable("lww", [("body", .text), ("n", .integer)], conflict: .lastWriterWins)
let manualTable = cloudTable("man", [("body", .text), ("n", .integer)], conflict: .manual)

let cloudTables = [orders, notes, serverWinsTable, clientWinsTable, lastWriterWinsTable, manualTable]

/// The stores every contract test runs against.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    var testDescription: String { rawValue }
}

/// Where one test's store lives, so that it can be opened again: a fresh directory, or a
/// fresh database in the test process's PostgreSQL cluster.
struct CloudPlace: Sendable {
    let backend: Backend
    let directory: String
    let database: PostgresSettings?

    init(_ backend: Backend) async throws {
        self.backend = backend
        directory = temporaryDirectory()
        database = backend == .postgresql ? try await offPool { try PostgresCluster.shared().createDatabase() } : nil
    }

    func open(tables: [TableSchema] = cloudTables) async throws -> any CloudStore {
        switch backend {
        case .sqlite:
            return try openSQLiteCloud(directory, tables: tables)
        case .postgresql:
            guard let database else { throw TestSupportError("no database for a PostgreSQL store") }
            return try await PostgresCloudStore.open(database, tables: tables, logger: quietLogger)
        }
    }
}

/// A logger that drops everything: the store's own warnings are not the test's output.
let quietLogger = Logger(label: "dally.tests", factory: { _ in SwiftLogNoOpLogHandler() })

/// A fresh, empty store of `backend`.
func openCloud(_ backend: Backend, tables: [TableSchema] = cloudTables) async throws -> any CloudStore {
    try await CloudPlace(backend).open(tables: tables)
}

func openSQLiteCloud(_ directory: String = temporaryDirectory(), tables: [TableSchema] = cloudTables) throws
    -> SQLiteCloudStore
{
    try SQLiteCloudStore.open(directory: directory, tables: tables, synchronousFull: false)
}

/// Collects what a commit observer is called with.
final class CommitRecorder: Sendable {
    private let calls = Mutex<[[String: Int64]]>([])
    var recorded: [[String: Int64]] { calls.withLock { $0 } }
    func record(_ versions: [String: Int64]) { calls.withLock { $0.append(versions) } }
}

func table(_ name: String, _ columns: [(String, ColumnType)]) -> TableSchema {
    let upload = UploadPolicy(maxDelay: .seconds(60), networks: ["wifi"])
    let download = DownloadPolicy(period: .seconds(60), networks: ["wifi"])
    return TableSchema(
        name: name, columns: columns.map { Column(name: $0.0, type: $0.1) }, conflict: .lastWriterWins,
        policy: SyncPolicy(
            localOnly: false, atomicSync: false, uploadRows: upload, uploadObjects: upload, downloadRows: download,
            downloadObjects: download))
}

let orders = table("orders", [("customer", .text), ("total", .real), ("paid", .boolean)])
let notes = table("notes", [("body", .text)])

/// A fresh, empty directory under the system's temporary directory.
func temporaryDirectory() -> String {
    let path = ScratchSpace.path("dally-cloud-store-tests-")
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
