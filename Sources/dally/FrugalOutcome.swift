import DallyCore
import DallyFrugal
import DallyObjects
import DallySync

/// What one strategy did with the trace, as counted outside it: at the relays' sockets, by the
/// radio model over the relays' activity, and in the cloud it filled.
struct FrugalOutcome {
    var name: String
    /// Bytes through the relays, headers included, and requests, per network class.
    var up: [String: Int] = [:]
    var down: [String: Int] = [:]
    var requests: [String: Int] = [:]
    /// The radios this strategy would wake: Dally's gateway has one per class; the baselines'
    /// devices one each (`perDevice`), or all share one per class (`shared`).
    var radios = RadioUsage()
    var sharedRadios: RadioUsage?
    var wakeUpsByClass: [String: Int] = [:]
    /// Bytes (both ways, headers included) of requests carrying wifi-only tables over cellular.
    var wifiOnlyBytesOverCellular = 0
    /// Object bytes sent, per network class: the bodies of chunk uploads as they went on the
    /// wire (no headers, asks or manifests). For Dally, the gateway's
    /// `sync.object_chunk_bytes_on_wire`, attributed to cellular when it grew while wifi was down
    /// (the relays forward bytes without reading them, so they cannot tell objects from rows).
    var objectBytes: [String: Int] = [:]
    /// Objects the cloud ends without (their rows name them, `GET /v1/objects/{hash}` is not 200).
    var missingObjects = 0
    var staleness = StalenessReport(perTable: [:], overall: StalenessStats())
    /// What the gateway itself counted, for Dally.
    var gatewayDeadlineMisses: Int?
    var dictionaries = 0
    /// Rows of the cloud's final data that differ from the trace's final state.
    var mismatchedRows = 0
    var missingRows = 0
    var seconds = 0.0

    var bytes: Int { up.values.reduce(0, +) + down.values.reduce(0, +) }
    var totalRequests: Int { requests.values.reduce(0, +) }
    var totalObjectBytes: Int { objectBytes.values.reduce(0, +) }

    mutating func count(_ counts: RelayCounts, networkClass: String) {
        up[networkClass, default: 0] += counts.bytesUp
        down[networkClass, default: 0] += counts.bytesDown
        requests[networkClass, default: 0] += counts.requests
    }
}

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
