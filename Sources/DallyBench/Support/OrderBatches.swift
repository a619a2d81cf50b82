import DallyCore
import DallySync
import Foundation

/// One gateway's stream of order-like batches: each batch carries `rowsPerBatch` changes of
/// table `orders`, new rows (uuid-like ids) and, for a fraction `updates`, full-row updates of
/// rows this gateway created recently, with the version it last learned as base version.
///
/// Versions are learned either from the cloud's answers (``record(_:)``) or, when this
/// gateway is the only writer of a fresh store, predicted (``assumeAccepted(_:)``): the store
/// gives every accepted change the table's next version.
struct OrderBatches {
    let gateway: String
    let replica: String
    let columns: [Column]
    let rowsPerBatch: Int
    let updates: Double
    let ids: BenchIDs
    private var random: SplitMix64
    private var recent: [String] = []
    private var oldest = 0
    private var versions: [String: Int64] = [:]
    private var updatedAt: Int64 = 1_750_000_000_000
    private var batches = 0
    private var predictedVersion: Int64 = 0

    /// Updates pick among this many of the most recently created rows: orders change soon
    /// after they are placed.
    private var hotRows: Int { 10 * rowsPerBatch }

    init(
        gateway: String, replica: String, columns: [Column], rowsPerBatch: Int, updates: Double, ids: BenchIDs,
        seed: UInt64
    ) {
        self.gateway = gateway
        self.replica = replica
        self.columns = columns
        self.rowsPerBatch = rowsPerBatch
        self.updates = updates
        self.ids = ids
        self.random = SplitMix64(seed: seed)
    }

    /// The next batch. The first carries only new rows: there is nothing to update yet.
    mutating func next() -> BatchRequest {
        batches += 1
        let updateCount = min(Int((Double(rowsPerBatch) * updates).rounded()), recent.count)
        var changes: [BatchRequest.Change] = []
        changes.reserveCapacity(rowsPerBatch)
        var chosen: Set<String> = []
        while chosen.count < updateCount {
            let id = recent[Int.random(in: 0..<recent.count, using: &random)]
            guard chosen.insert(id).inserted else { continue }
            changes.append(change(id: id, base: versions[id]))
        }
        while changes.count < rowsPerBatch { changes.append(change(id: uuid(), base: nil)) }
        return BatchRequest(
            batchID: "\(gateway)-b\(batches)", gateway: gateway, replica: replica, since: TableVersions(),
            sections: [.init(table: BenchConfigs.table, columns: columns.map(\.name), changes: changes)])
    }

    /// Learns the versions of the rows `answer` accepted (or the client won).
    mutating func record(_ answer: BatchAnswer) {
        for section in answer.results {
            for result in section.rows {
                switch result {
                case .accepted(let id, let version): learn(id, version)
                case .conflict(let id, let conflict): learn(id, conflict.version)
                case .rejected: continue
                }
            }
        }
    }

    /// Learns versions as a fresh store that only this gateway writes to assigns them: in
    /// order, one per change.
    mutating func assumeAccepted(_ batch: BatchRequest) {
        for section in batch.sections {
            for change in section.changes {
                predictedVersion += 1
                learn(change.id, predictedVersion)
            }
        }
    }

    private mutating func learn(_ id: String, _ version: Int64) {
        if versions.updateValue(version, forKey: id) == nil {
            // A ring of the latest `hotRows` ids.
            if recent.count < hotRows {
                recent.append(id)
            } else {
                recent[oldest] = id
                oldest = (oldest + 1) % hotRows
            }
        }
    }

    private mutating func change(id: String, base: Int64?) -> BatchRequest.Change {
        updatedAt += 1
        return BatchRequest.Change(
            id: id, baseVersion: base, updatedAt: updatedAt, deleted: false, values: columns.map { value(for: $0) })
    }

    /// `5f0c2a9e-41d7-4b3e-8a6f-0d2e9c7b1a35`-like; for ``BenchIDs/ordered``, the first 48 bits
    /// are the change's `updated_at`, which grows alike on every gateway.
    private mutating func uuid() -> String {
        var (a, b) = (random.next(), random.next())
        if ids == .ordered { a = UInt64(bitPattern: updatedAt) << 16 | (a & 0xFFFF) }
        let hex = String(a, radix: 16).leftPadded(16) + String(b, radix: 16).leftPadded(16)
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
            hex.suffix(12),
        ]
        return parts.joined(separator: "-")
    }

    private mutating func value(for column: Column) -> JSONValue {
        switch column.type {
        case .text: return .string("\(column.name)-\(Int.random(in: 1...50_000, using: &random))")
        case .integer: return .int(Int64.random(in: 0...1_000_000, using: &random))
        case .real: return .double(Double(Int.random(in: 100...50_000, using: &random)) / 100)
        case .boolean: return .bool(Bool.random(using: &random))
        case .json: return items()
        case .blob, .object:
            // Sixteen bytes in base64 (OBJECT columns are refused before a run starts).
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            return .string(Data(bytes).base64EncodedString())
        }
    }

    /// `[{"sku":"SKU-1042","qty":2,"price":9.95}, …]`, one to three lines.
    private mutating func items() -> JSONValue {
        .array(
            (0..<Int.random(in: 1...3, using: &random)).map { _ in
                .object([
                    JSONMember("sku", .string("SKU-\(Int.random(in: 1000...9999, using: &random))")),
                    JSONMember("qty", .int(Int64.random(in: 1...5, using: &random))),
                    JSONMember("price", .double(Double(Int.random(in: 100...9_999, using: &random)) / 100)),
                ])
            })
    }
}

/// Zero-padding for the hex of an id.
extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
