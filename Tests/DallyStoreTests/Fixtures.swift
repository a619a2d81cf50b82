import DallyCore
import DallyTestSupport
import Foundation
import Synchronization

@testable import DallyStore
import DallyCloudStore

func table(_ name: String, _ columns: [(String, ColumnType)], localOnly: Bool = false) -> TableSchema {
    let upload = UploadPolicy(maxDelay: .seconds(60), networks: ["wifi"])
    let download = DownloadPolicy(period: .seconds(60), networks: ["wifi"])
    return TableSchema(
        name: name,
        columns: columns.map { Column(name: $0.0, type: $0.1) },
        conflict: .lastWriterWins,
        policy: SyncPolicy(
            localOnly: localOnly, atomicSync: false, uploadRows: upload, uploadObjects: upload,
            downloadRows: download, downloadObjects: download)
    )
}

let orders = table("orders", [("customer", .text), ("total", .real), ("paid", .boolean)])
let notes = table("notes", [("body", .text)])

/// A fresh, empty directory under the system's temporary directory.
func temporaryDirectory() -> String {
    let path = ScratchSpace.path("dally-store-tests-")
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A wall clock the test sets by hand.
final class FixedClock: Sendable {
    private let millis: Mutex<Int64>
    init(_ start: Int64) { millis = Mutex(start) }
    var now: Int64 { millis.withLock { $0 } }
    func advance(_ delta: Int64) { millis.withLock { $0 += delta } }
}

func put(_ id: String, _ values: [(Int, Value)], expectedSeq: Int64? = nil, updatedAt: Int64? = nil) -> RowWrite {
    RowWrite(id: id, kind: .put, values: values.map { (index: $0.0, value: $0.1) }, updatedAt: updatedAt, expectedSeq: expectedSeq)
}

func patch(_ id: String, _ values: [(Int, Value)], expectedSeq: Int64? = nil) -> RowWrite {
    RowWrite(id: id, kind: .patch, values: values.map { (index: $0.0, value: $0.1) }, updatedAt: nil, expectedSeq: expectedSeq)
}

func delete(_ id: String) -> RowWrite {
    RowWrite(id: id, kind: .delete, values: [], updatedAt: nil, expectedSeq: nil)
}

/// A table of the Fixtures' shape with a chosen conflict policy.
func cloudTable(_ name: String, _ columns: [(String, ColumnType)], conflict: ConflictPolicy) -> TableSchema {
    let base = table(name, columns)
    return TableSchema(name: base.name, columns: base.columns, conflict: conflict, policy: base.policy)
}

/// An SQLite cloud store in a fresh directory, for a replica to sync with.
func openCloud(tables: [TableSchema]) throws -> SQLiteCloudStore {
    try SQLiteCloudStore.open(directory: temporaryDirectory(), tables: tables, synchronousFull: false)
}
