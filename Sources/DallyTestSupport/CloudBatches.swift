import DallyCore
import DallySync

// Batches for tests of cloud stores and of replicas syncing with one: built in a line each,
// sent with the fingerprint the HTTP layer would give them.

/// What the cloud records as the writer of a row: the replica, qualified by its gateway.
public let originA = BatchRequest.origin(gateway: "gw-a", replica: "rep-a")
public let originB = BatchRequest.origin(gateway: "gw-b", replica: "rep-b")

public func cloudPut(_ id: String, base: Int64? = nil, at updatedAt: Int64 = 1_000, _ values: [JSONValue])
    -> BatchRequest.Change
{
    BatchRequest.Change(id: id, baseVersion: base, updatedAt: updatedAt, deleted: false, values: values)
}

public func cloudDelete(_ id: String, base: Int64? = nil, at updatedAt: Int64 = 1_000) -> BatchRequest.Change {
    BatchRequest.Change(id: id, baseVersion: base, updatedAt: updatedAt, deleted: true, values: [])
}

public func cloudSection(_ table: String, _ columns: [String], _ changes: [BatchRequest.Change]) -> BatchRequest.Section {
    BatchRequest.Section(table: table, columns: columns, changes: changes)
}

public func cloudBatch(
    _ id: String, gateway: String = "gw-a", replica: String = "rep-a", since: [(String, Int64)] = [],
    _ sections: [BatchRequest.Section]
) -> BatchRequest {
    BatchRequest(
        batchID: id, gateway: gateway, replica: replica, since: TableVersions(since.map { (table: $0.0, version: $0.1) }),
        sections: sections)
}

extension CloudStore {
    /// Applies `batch` with the fingerprint of its encoded body, as the HTTP layer does.
    public func send(_ batch: BatchRequest, pageRows: Int = 1_000, now: Int64 = 1_000) async throws -> BatchAnswer {
        try await apply(batch, fingerprint: Fingerprint.of(batch.encode()), pageRows: pageRows, now: now)
    }

    /// Every change of `table`, read in pages of `pageSize` until the end.
    public func allChanges(_ table: String, excluding replica: String? = nil, pageSize: Int = 1_000) async throws
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
    public var allRows: [RowResult] { results.flatMap(\.rows) }
}

