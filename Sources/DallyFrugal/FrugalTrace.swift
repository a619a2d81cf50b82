import DallyTestSupport
import DallyCore

/// One simulated hour of local writes for the frugality benchmark (`dally-bench frugal`):
/// what 50 local clients write through the gateway, when wifi is up, and what the cloud must
/// end with.
///
/// A trace is data, not a process: the driver replays ``writes`` against a gateway on a manual
/// clock, and the same trace feeds the baselines and the floors, so every column of the report
/// is measured on exactly the same workload. ``generate(seed:clients:duration:wifi:)`` makes
/// one from a seed alone, byte-identical on every machine.
public struct FrugalTrace: Sendable, Equatable {
    /// The tables the writes go to, in the order the gateway's configuration declares them.
    public var tables: [TraceTable]
    /// Every write, sorted by time, then client, then table, then row id.
    public var writes: [TraceWrite]
    /// When wifi is up, in milliseconds from the start, sorted and disjoint; cellular is always
    /// up. A stretch that reaches ``duration`` stays up after the trace ends.
    public var wifiUp: [Range<Int64>]
    /// The length of the trace in milliseconds; every write is at a time in `0..<duration`.
    public var duration: Int64
    /// How many local clients write; client numbers are `0..<clients`.
    public var clients: Int

    public init(tables: [TraceTable], writes: [TraceWrite], wifiUp: [Range<Int64>], duration: Int64, clients: Int) {
        self.tables = tables
        self.writes = writes
        self.wifiUp = wifiUp
        self.duration = duration
        self.clients = clients
    }

    /// The wall-clock time, in milliseconds since 1970, that the trace's zero stands for inside
    /// its values (the photos' `taken_at`). The same as `ManualClock`'s default epoch, so a
    /// driver that keeps that default sends `updated_at`s consistent with those values.
    public static let epochMillis: Int64 = 1_800_000_000_000

    /// The table named `name`, if the trace has it.
    public func table(_ name: String) -> TraceTable? {
        tables.first { $0.name == name }
    }

    /// What the cloud ends with once every write has arrived: per table, per row id, the last
    /// write of that row. A row whose last write deletes it ends as that tombstone.
    public func finalRows() -> [String: [String: TraceWrite]] {
        var rows: [String: [String: TraceWrite]] = [:]
        for table in tables { rows[table.name] = [:] }
        for write in writes { rows[write.table, default: [:]][write.id] = write }
        return rows
    }

    /// The distinct objects the final rows hold, in the order of their first write: what the
    /// cloud must end up holding whole.
    public func finalObjects() -> [TraceObject] {
        let live = Set(finalRows().values.flatMap { $0.values }.compactMap { $0.deleted ? nil : $0.object })
        var seen: Set<TraceObject> = []
        return writes.compactMap { write in
            guard let object = write.object, live.contains(object), seen.insert(object).inserted else { return nil }
            return object
        }
    }

    /// The distinct objects any write stores, in the order of their first write.
    public var storedObjects: [TraceObject] {
        var seen: Set<TraceObject> = []
        return writes.compactMap { write in
            guard let object = write.object, seen.insert(object).inserted else { return nil }
            return object
        }
    }

    /// How many writes go to each table.
    public var writesPerTable: [String: Int] {
        var counts: [String: Int] = [:]
        for table in tables { counts[table.name] = 0 }
        for write in writes { counts[write.table, default: 0] += 1 }
        return counts
    }

    /// Whether wifi is up at `time` (ms from the start); after the end it stays as it was.
    public func isWifiUp(at time: Int64) -> Bool {
        wifiUp.contains { $0.contains(time) || ($0.upperBound >= duration && time >= $0.lowerBound) }
    }
}

/// How wifi behaves during a trace.
public enum WifiPattern: String, Sendable, CaseIterable {
    /// Wifi up for the whole trace: every table may always go over wifi.
    case always
    /// Wifi up about 60% of the time in 2–4 stretches, as a shop whose access point drops or a
    /// van that leaves the depot: the first stretch starts at 0 and lasts at least 5 minutes,
    /// and the last runs to the end so that wifi-only rows can all arrive.
    case partial
}

/// A table of the trace, as the gateway's configuration declares it.
public struct TraceTable: Sendable, Equatable {
    public var name: String
    /// Column declarations as Dally's TOML takes them, such as `"temp REAL"`.
    public var columns: [String]
    /// The upload policy's `max_delay`, in milliseconds.
    public var maxDelay: Int64
    /// The network classes the upload policy allows: `"wifi"`, `"cellular"`.
    public var networks: [String]
    /// The `upload_objects` policy of a table with an `OBJECT` column; nil for a table without.
    public var uploadObjects: TraceUploadPolicy?

    public init(
        name: String, columns: [String], maxDelay: Int64, networks: [String], uploadObjects: TraceUploadPolicy? = nil
    ) {
        self.name = name
        self.columns = columns
        self.maxDelay = maxDelay
        self.networks = networks
        self.uploadObjects = uploadObjects
    }

    /// The position of the table's `OBJECT` column (the trace's tables have at most one).
    public var objectColumn: Int? {
        columns.firstIndex { $0.hasSuffix(" OBJECT") }
    }

    /// The column names without their types, in declaration order: what a batch section's
    /// `columns` lists.
    public var columnNames: [String] {
        columns.map { declaration in
            String(declaration.prefix { $0 != " " })
        }
    }

    /// Whether the policy allows cellular; a table that does not waits for wifi.
    public var allowsCellular: Bool { networks.contains("cellular") }

    /// This table's `[[tables]]` block for a gateway or cloud TOML configuration, so the driver's
    /// configuration cannot drift from the trace.
    public var tomlBlock: String {
        let columnList = columns.map { "\"\($0)\"" }.joined(separator: ", ")
        var block = """
            [[tables]]
            name = "\(name)"
            columns = [\(columnList)]
            upload = \(TraceUploadPolicy(maxDelay: maxDelay, networks: networks).toml)

            """
        if let uploadObjects { block += "upload_objects = \(uploadObjects.toml)\n" }
        return block
    }
}

/// An upload policy: how long a change may wait, and over which network classes it may go.
public struct TraceUploadPolicy: Sendable, Equatable {
    /// Milliseconds.
    public var maxDelay: Int64
    /// `"wifi"`, `"cellular"`.
    public var networks: [String]

    public init(maxDelay: Int64, networks: [String]) {
        self.maxDelay = maxDelay
        self.networks = networks
    }

    /// The policy as an inline TOML table: `{ max_delay = "600s", networks = ["wifi"] }`.
    public var toml: String {
        let networkList = networks.map { "\"\($0)\"" }.joined(separator: ", ")
        let delay = maxDelay % 1000 == 0 ? "\(maxDelay / 1000)s" : "\(maxDelay)ms"
        return "{ max_delay = \"\(delay)\", networks = [\(networkList)] }"
    }
}

/// A large object of the trace (a photo's image): seeded incompressible bytes of a given size,
/// made piece by piece by ``SyntheticObject`` when a run needs them. The trace never holds the
/// bytes nor their SHA-256 (hashing the hour's ~130 MB is left to the runs that need it).
public struct TraceObject: Sendable, Hashable {
    /// Bytes.
    public var size: Int
    public var seed: UInt64

    public init(size: Int, seed: UInt64) {
        self.size = size
        self.seed = seed
    }

    /// The object's bytes, as a stream or piece by piece.
    public var synthetic: SyntheticObject { SyntheticObject(size: size, seed: seed) }
}

/// One local write: a client putting (or deleting) a row through the gateway's API.
public struct TraceWrite: Sendable, Equatable {
    /// Milliseconds from the start of the trace.
    public var at: Int64
    /// The writing client, `0..<clients`.
    public var client: Int
    public var table: String
    /// The row id: 1–128 of `A–Z a–z 0–9 - _ . : ~`.
    public var id: String
    /// One value per column of the table, in column order; empty for a delete. An `OBJECT`
    /// column's value is `null` here: what the column holds is ``object``, whose reference
    /// (its SHA-256 among others) only a run that makes the bytes knows.
    public var values: [JSONValue]
    public var deleted: Bool
    /// For a table with an `OBJECT` column: the object the column holds after this write. The
    /// write that first names an object stores it (a photo taken); later writes of the row that
    /// name the same object keep it (a caption edit). nil: the column is null.
    public var object: TraceObject?

    public init(
        at: Int64, client: Int, table: String, id: String, values: [JSONValue], deleted: Bool = false,
        object: TraceObject? = nil
    ) {
        self.at = at
        self.client = client
        self.table = table
        self.id = id
        self.values = values
        self.deleted = deleted
        self.object = object
    }

    /// The order of ``FrugalTrace/writes``: time, then client, then table, then id — a total
    /// order, so sorting does not depend on the sort's stability.
    static func precedes(_ a: TraceWrite, _ b: TraceWrite) -> Bool {
        if a.at != b.at { return a.at < b.at }
        if a.client != b.client { return a.client < b.client }
        if a.table != b.table { return a.table < b.table }
        return a.id < b.id
    }
}
