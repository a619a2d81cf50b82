import DallyCompression
import DallyCore
import DallySync
import Foundation

/// Deterministic traffic of the three tables: sections as JSON, exactly as `BatchRequest`
/// encodes them, with per-device readings that wander like real ones.
struct CodecTraffic {
    let distribution: CodecDistribution
    private var random: SplitMix64
    private var clock: Int64 = 1_767_225_600_000
    private var version: Int64 = 48_210
    /// Telemetry comes from this many devices; status rows from a fleet of `fleet`.
    static let sensors = 48
    static let fleet = 1_200
    private var temperature: [Int]
    private var humidity: [Int]
    private var battery: [Int]

    init(_ distribution: CodecDistribution, seed: UInt64) {
        self.distribution = distribution
        var random = SplitMix64(seed: seed)
        temperature = (0..<Self.sensors).map { _ in 170 + Int(random.next() % 80) + distribution.warmer }
        humidity = (0..<Self.sensors).map { _ in 350 + Int(random.next() % 250) + distribution.damper }
        battery = (0..<Self.sensors).map { _ in 40 + Int(random.next() % 60) }
        self.random = random
    }

    mutating func next() -> UInt64 { random.next() }

    /// 1 to 100, log-uniform: many small sections, a few large ones.
    mutating func rowCount() -> Int {
        Int(exp(Double(random.next() % 1_000_000) / 1_000_000 * log(100.0)).rounded())
    }

    /// `count` sections of `table` of 1 to 100 rows, as training samples.
    mutating func samples(_ table: CodecTable, count: Int) -> [[UInt8]] {
        (0..<count).map { _ in json(table, rows: rowCount()) }
    }

    /// One section of `rows` rows as JSON: what `BatchRequest.encode` writes between the
    /// envelope's `"sections":[` and the closing `]}`.
    mutating func json(_ table: CodecTable, rows: Int) -> [UInt8] {
        Self.json(section(table, rows: rows))
    }

    static func json(_ section: BatchRequest.Section) -> [UInt8] {
        let encoded = BatchRequest(batchID: "b", gateway: "g", replica: "r", since: TableVersions(), sections: [section]).encode()
        return Array(encoded[emptyEnvelope.count..<(encoded.count - 2)])
    }

    private static let emptyEnvelope = Array(
        BatchRequest(batchID: "b", gateway: "g", replica: "r", since: TableVersions(), sections: []).encode().dropLast(2))

    /// A batch with one section of `rows` rows per table.
    mutating func batch(rows: Int) -> CodecBatch {
        batch(CodecTable.allCases.map { section($0, rows: rows) })
    }

    /// A batch of at least `bytes` bytes: sections of 50 to 2000 rows of the three tables in turn.
    mutating func batch(bytes: Int) -> CodecBatch {
        var sections: [BatchRequest.Section] = []
        var size = 0
        while size < bytes {
            let table = CodecTable.allCases[sections.count % 3]
            let section = section(table, rows: 50 + Int(random.next() % (table == .status ? 950 : 1950)))
            size += Self.json(section).count + 1
            sections.append(section)
        }
        return batch(sections)
    }

    private mutating func batch(_ sections: [BatchRequest.Section]) -> CodecBatch {
        // A table may have one section per batch: number the tables of a large batch apart.
        var named = sections
        for index in named.indices where index >= 3 { named[index].table += "_\(index / 3)" }
        let since = TableVersions(CodecTable.allCases.map { ($0.rawValue, version - Int64(random.next() % 5_000)) })
        var request = BatchRequest(batchID: uuid(), gateway: "gateway-site-07", replica: "replica-07a", since: since, sections: [])
        var json = Array(request.encode().dropLast(2))
        var ranges: [(CodecTable, Range<Int>)] = []
        for (index, section) in named.enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            let start = json.count
            json += Self.json(section)
            ranges.append((CodecTable.allCases[index % 3], start..<json.count))
        }
        json += Array("]}".utf8)
        request.sections = named
        precondition(json == request.encode(), "the batch's pieces do not add up to its encoding")
        return CodecBatch(json: json, sections: ranges)
    }

    private mutating func section(_ table: CodecTable, rows: Int) -> BatchRequest.Section {
        var changes: [BatchRequest.Change] = []
        changes.reserveCapacity(rows)
        switch table {
        case .telemetry:
            for _ in 0..<rows {
                clock += 20 + Int64(random.next() % 400)
                let n = Int(random.next() % UInt64(Self.sensors))
                temperature[n] += Int(random.next() % 7) - 3
                humidity[n] += Int(random.next() % 9) - 4
                if random.next() % 50 == 0 { battery[n] = max(5, battery[n] - 1) }
                changes.append(.init(
                    id: uuid(time: clock), baseVersion: nil, updatedAt: clock, deleted: false,
                    values: [
                        .string(device(n)), .double(Double(temperature[n]) / 10), .double(Double(humidity[n]) / 10),
                        .int(Int64(battery[n])), .int(-45 - Int64(random.next() % 40)),
                    ]))
            }
        case .status:
            // Distinct devices: a section names a row once.
            let first = Int(random.next() % UInt64(Self.fleet))
            for k in 0..<min(rows, Self.fleet) {
                clock += Int64(random.next() % 50)
                let n = (first + k * 7) % Self.fleet
                let online = random.next() % 10 != 0
                let errors = ["E_TIMEOUT", "E_SENSOR", "E_LOW_BATTERY"]
                changes.append(.init(
                    id: device(n), baseVersion: version - Int64(random.next() % 20_000), updatedAt: clock, deleted: false,
                    values: [
                        .bool(online), .string(distribution.firmware[Int(random.next() % 10) / 4]),
                        .int(clock - Int64(random.next() % (online ? 60_000 : 86_400_000))),
                        .int(Int64(random.next() % 3_000_000)), .int(20 + Int64(random.next() % 81)),
                        random.next() % 20 == 0 ? .string(errors[Int(random.next() % 3)]) : .null,
                    ]))
            }
        case .orders:
            let statuses = ["placed", "paid", "packed", "shipped"]
            for _ in 0..<rows {
                clock += 100 + Int64(random.next() % 5_000)
                var totalCents = 0
                let items: [JSONValue] = (0..<(1 + Int(random.next() % 3))).map { _ in
                    let sku = Int(random.next() % 300)
                    let cents = Int((Double(199 + sku * 37 % 9_800) * distribution.prices).rounded())
                    let quantity = 1 + Int(random.next() % 4)
                    totalCents += cents * quantity
                    return .object([
                        JSONMember("sku", .string("SKU-\(distribution.firstSKU + sku)")),
                        JSONMember("qty", .int(Int64(quantity))), JSONMember("price", .double(Double(cents) / 100)),
                    ])
                }
                let update = random.next() % 5 == 0
                changes.append(.init(
                    id: uuid(), baseVersion: update ? version - Int64(random.next() % 5_000) : nil, updatedAt: clock,
                    deleted: false,
                    values: [
                        .string("cus-\(distribution.firstCustomer + Int(random.next() % 5_000))"),
                        .double(Double(totalCents) / 100), .bool(random.next() % 3 != 0), .array(items),
                        .string(statuses[Int(random.next() % 4)]),
                    ]))
            }
        }
        version += Int64(rows)
        guard distribution.extraColumn else {
            return .init(table: table.rawValue, columns: table.columns, changes: changes)
        }
        for index in changes.indices {
            let value: JSONValue =
                switch table {
                case .telemetry: .double(Double(10_000 + Int(random.next() % 300)) / 10)
                case .status: .string("10.7.\(random.next() % 16).\(random.next() % 250)")
                case .orders: .string(["EUR", "EUR", "CHF", "GBP"][Int(random.next() % 4)])
                }
            changes[index].values.append(value)
        }
        let extra = ["telemetry": "pressure", "status": "ip", "orders": "currency"][table.rawValue] ?? "extra"
        return .init(table: table.rawValue, columns: table.columns + [extra], changes: changes)
    }

    private func device(_ n: Int) -> String {
        let number = String(distribution.firstDevice + n)
        return "dev-" + String(repeating: "0", count: max(0, 4 - number.count)) + number
    }

    /// A uuid-like id: random (v4-like), or with `time` in its first 48 bits (v7-like).
    private mutating func uuid(time: Int64? = nil) -> String {
        var (a, b) = (random.next(), random.next())
        if let time { a = UInt64(bitPattern: time) << 16 | 0x7000 | (a & 0x0FFF) }
        let hex = [a, b].map { String(repeating: "0", count: $0.leadingZeroBitCount / 4) + String($0, radix: 16) }.joined()
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
            hex.suffix(12),
        ]
        return parts.joined(separator: "-")
    }
}
