import DallyCore
import DallySync
import Foundation
import Synchronization
import Testing

@testable import DallyCloudStore
@testable import DallyStore

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

func openCloud(_ directory: String = temporaryDirectory(), tables: [TableSchema] = cloudTables) throws -> SQLiteCloudStore {
    try SQLiteCloudStore.open(directory: directory, tables: tables, synchronousFull: false)
}

/// What the cloud records as the writer of a row: the replica, qualified by its gateway.
let originA = BatchRequest.origin(gateway: "gw-a", replica: "rep-a")
let originB = BatchRequest.origin(gateway: "gw-b", replica: "rep-b")

func cloudPut(_ id: String, base: Int64? = nil, at updatedAt: Int64 = 1_000, _ values: [JSONValue])
    -> BatchRequest.Change
{
    BatchRequest.Change(id: id, baseVersion: base, updatedAt: updatedAt, deleted: false, values: values)
}

func cloudDelete(_ id: String, base: Int64? = nil, at updatedAt: Int64 = 1_000) -> BatchRequest.Change {
    BatchRequest.Change(id: id, baseVersion: base, updatedAt: updatedAt, deleted: true, values: [])
}

func cloudSection(_ table: String, _ columns: [String], _ changes: [BatchRequest.Change]) -> BatchRequest.Section {
    BatchRequest.Section(table: table, columns: columns, changes: changes)
}

func cloudBatch(
    _ id: String, gateway: String = "gw-a", replica: String = "rep-a", since: [(String, Int64)] = [],
    _ sections: [BatchRequest.Section]
) -> BatchRequest {
    BatchRequest(
        batchID: id, gateway: gateway, replica: replica, since: TableVersions(since.map { (table: $0.0, version: $0.1) }),
        sections: sections)
}

extension CloudStore {
    /// Applies `batch` with the fingerprint of its encoded body, as the HTTP layer does.
    func send(_ batch: BatchRequest, pageRows: Int = 1_000, now: Int64 = 1_000) async throws -> BatchAnswer {
        try await apply(batch, fingerprint: Fingerprint.of(batch.encode()), pageRows: pageRows, now: now)
    }

    /// Every change of `table`, read in pages of `pageSize` until the end.
    func allChanges(_ table: String, excluding replica: String? = nil, pageSize: Int = 1_000) async throws
        -> [ChangePage.ChangedRow]
    {
        var rows: [ChangePage.ChangedRow] = []
        var since: Int64 = 0
        while true {
            let page = try await changes(table: table, since: since, limit: pageSize, excludingReplica: replica)
            rows += page.rows
            since = page.version
            if !page.more { return rows }
        }
    }
}

extension BatchAnswer {
    /// The row results of every section, in order.
    var allRows: [RowResult] { results.flatMap(\.rows) }
}

/// Collects what a commit observer is called with.
final class CommitRecorder: Sendable {
    private let calls = Mutex<[[String: Int64]]>([])
    var recorded: [[String: Int64]] { calls.withLock { $0 } }
    func record(_ versions: [String: Int64]) { calls.withLock { $0.append(versions) } }
}
