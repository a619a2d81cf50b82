/// How stale the cloud's copy was: for each local write, how long until the cloud held it (or
/// a newer state of the same row), and whether that was within the table's max delay.
///
/// Pure bookkeeping over two streams the driver feeds it: the writes it makes, and the rows it
/// sees arrive in the cloud (with the `updated_at` each arrived with, converted to trace
/// milliseconds). A write is delivered by the first arrival of its row with an `updated_at`
/// at or after the write's time: a write superseded before it left counts as delivered when
/// the newer state arrives, since that is when the cloud stopped being behind it.
public struct StalenessTracker: Sendable {
    /// Max delay per table, in milliseconds.
    private let maxDelays: [String: Int64]
    /// Slack on every deadline: the driver's tick, since it can only observe arrivals that often.
    public let tolerance: Int64
    /// Times of each row's writes not yet delivered, ascending.
    private var pending: [RowKey: [Int64]] = [:]
    /// Delivered writes' staleness (ms), per table.
    private var delivered: [String: [Int64]] = [:]

    private struct RowKey: Hashable {
        let table: String
        let id: String
    }

    /// - Parameters:
    ///   - tables: the tables whose max delays are the deadlines.
    ///   - tolerance: milliseconds of slack on each deadline, such as the driver's tick.
    public init(tables: [TraceTable], tolerance: Int64 = 0) {
        maxDelays = Dictionary(tables.map { ($0.name, $0.maxDelay) }, uniquingKeysWith: { first, _ in first })
        self.tolerance = tolerance
        for table in tables { delivered[table.name] = [] }
    }

    /// Records a local write of row `id` of `table` at `at` (trace ms).
    public mutating func recordWrite(table: String, id: String, at: Int64) {
        let key = RowKey(table: table, id: id)
        var times = pending[key] ?? []
        // Writes come in time order; insert in place if one does not.
        if let last = times.last, last > at {
            times.insert(at, at: times.firstIndex { $0 > at } ?? times.count)
        } else {
            times.append(at)
        }
        pending[key] = times
        if delivered[table] == nil { delivered[table] = [] }
    }

    /// Records that the cloud was seen holding row `id` of `table` with `updated_at` =
    /// `updatedAt` (trace ms) at `arrivedAt` (trace ms): every pending write of that row at or
    /// before `updatedAt` is delivered then. Rows with nothing pending are ignored.
    public mutating func recordArrival(table: String, id: String, updatedAt: Int64, arrivedAt: Int64) {
        let key = RowKey(table: table, id: id)
        guard let times = pending[key], let first = times.first, first <= updatedAt else { return }
        let split = times.firstIndex { $0 > updatedAt } ?? times.count
        for at in times[..<split] { delivered[table, default: []].append(max(arrivedAt - at, 0)) }
        pending[key] = split == times.count ? nil : Array(times[split...])
    }

    /// The staleness figures at trace time `end`, per table and over all tables. A write still
    /// undelivered at `end` counts as a deadline miss if its deadline (plus the tolerance) has
    /// passed by then. A table with no max delay (not among the tables given) has no deadline.
    public func report(at end: Int64) -> StalenessReport {
        var undelivered: [String: [Int64]] = [:]
        for (key, times) in pending { undelivered[key.table, default: []] += times }
        var perTable: [String: StalenessStats] = [:]
        for table in Set(delivered.keys).union(undelivered.keys) {
            perTable[table] = stats(
                delivered: delivered[table] ?? [], undelivered: undelivered[table] ?? [],
                deadline: maxDelays[table].map { $0 + tolerance } ?? .max, end: end)
        }
        // Overall: each table's misses against its own deadline, staleness pooled.
        let all = perTable.keys.sorted().reduce(into: [Int64]()) { $0 += delivered[$1] ?? [] }
        var overall = StalenessStats(staleness: all)
        overall.undelivered = perTable.values.reduce(0) { $0 + $1.undelivered }
        overall.deadlineMisses = perTable.values.reduce(0) { $0 + $1.deadlineMisses }
        return StalenessReport(perTable: perTable, overall: overall)
    }

    private func stats(delivered: [Int64], undelivered: [Int64], deadline: Int64, end: Int64) -> StalenessStats {
        var stats = StalenessStats(staleness: delivered)
        stats.undelivered = undelivered.count
        stats.deadlineMisses =
            delivered.filter { $0 > deadline }.count + undelivered.filter { end - $0 > deadline }.count
        return stats
    }
}

/// Staleness per table and overall.
public struct StalenessReport: Sendable, Equatable {
    public var perTable: [String: StalenessStats]
    public var overall: StalenessStats

    public init(perTable: [String: StalenessStats] = [:], overall: StalenessStats = StalenessStats()) {
        self.perTable = perTable
        self.overall = overall
    }
}

/// Staleness of a set of writes, in milliseconds.
public struct StalenessStats: Sendable, Equatable {
    public var delivered = 0
    public var undelivered = 0
    /// Nearest-rank percentiles and the maximum of delivered writes' staleness; 0 when none.
    public var p50: Int64 = 0
    public var p99: Int64 = 0
    public var max: Int64 = 0
    /// Writes delivered later than their table's max delay plus the tolerance, or still
    /// undelivered past it.
    public var deadlineMisses = 0

    public init() {}

    init(staleness: [Int64]) {
        let sorted = staleness.sorted()
        delivered = sorted.count
        p50 = Self.percentile(sorted, 50)
        p99 = Self.percentile(sorted, 99)
        max = sorted.last ?? 0
    }

    /// The nearest-rank percentile `p` of ascending `sorted`: the smallest value with at least
    /// p% of the values at or below it.
    static func percentile(_ sorted: [Int64], _ p: Int) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = (p * sorted.count + 99) / 100
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }
}
