import DallyCore
import DallyFrugal
import DallyObjects
import DallySync

/// Reads the cloud the benchmark filled: what arrived since the last look (for staleness),
/// and, at the end, whether it holds exactly the trace's final data.
struct CloudReader {
    let store: any CloudStore
    let trace: FrugalTrace
    let hashes: FrugalObjectHashes
    private(set) var cursors: [String: Int64] = [:]

    init(store: any CloudStore, trace: FrugalTrace, hashes: FrugalObjectHashes) {
        self.store = store
        self.trace = trace
        self.hashes = hashes
    }

    /// Rows changed since the last call, as (table, id, updated_at in trace ms).
    mutating func arrivals() async throws -> [(table: String, id: String, at: Int64)] {
        var found: [(String, String, Int64)] = []
        for table in trace.tables {
            var since = cursors[table.name] ?? 0
            while true {
                let page = try await store.changes(table: table.name, since: since, limit: 100_000, excludingReplica: nil)
                for row in page.rows { found.append((table.name, row.id, row.updatedAt - FrugalTrace.epochMillis)) }
                since = page.version
                if !page.more { break }
            }
            cursors[table.name] = since
        }
        return found
    }

    /// Compares every row of the cloud with the trace's last write of it.
    func verify() async throws -> (mismatched: Int, missing: Int) {
        let expected = trace.finalRows()
        var mismatched = 0
        var missing = 0
        for table in trace.tables {
            var seen: [String: ChangePage.ChangedRow] = [:]
            var since: Int64 = 0
            while true {
                let page = try await store.changes(table: table.name, since: since, limit: 100_000, excludingReplica: nil)
                for row in page.rows { seen[row.id] = row }
                since = page.version
                if !page.more { break }
            }
            for (id, write) in expected[table.name] ?? [:] {
                guard let row = seen[id] else {
                    missing += 1
                    continue
                }
                let same =
                    row.deleted == write.deleted && row.updatedAt == FrugalTrace.epochMillis + write.at
                    && (write.deleted || sameValues(row.values, write, table: table))
                if !same { mismatched += 1 }
            }
            mismatched += seen.keys.filter { expected[table.name]?[$0] == nil }.count
        }
        return (mismatched, missing)
    }

    /// The cloud's values against the write's; an `OBJECT` column must hold a reference to the
    /// write's object (its hash and size; the chunk count is the sender's to choose).
    private func sameValues(_ values: [JSONValue], _ write: TraceWrite, table: TraceTable) -> Bool {
        guard let column = table.objectColumn, values.count == write.values.count, column < values.count else {
            return values == write.values
        }
        for index in values.indices where index != column {
            if values[index] != write.values[index] { return false }
        }
        switch (values[column], write.object) {
        case (.null, nil): return true
        case (let json, let object?):
            // Pages carry a reference as its JSON object (older stores: as its text).
            let reference: ObjectReference?
            if case .string(let text) = json {
                reference = ObjectReference(jsonText: text)
            } else {
                reference = try? ObjectReference(json: json, field: "")
            }
            guard let reference, let hash = hashes.hashes[object] else { return false }
            return reference.hash == hash && reference.size == Int64(object.size)
        default: return false
        }
    }
}
