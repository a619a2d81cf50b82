import DallyCore
import DallyScheduler
import Testing

/// The scheduler tests' draws on the shared seeded generator: plain modulo, as these traces
/// were first drawn, so that every seed still replays the same trace.
extension SplitMix64 {
    /// Uniform enough in `range`, and the same on every platform and toolchain (unlike `random(in:using:)`).
    mutating func int(_ range: ClosedRange<Int64>) -> Int64 {
        range.lowerBound + Int64(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int(int(Int64(range.lowerBound)...Int64(range.upperBound))) }

    /// True for about `percent` in 100 draws (modulo, unlike `chance(_:)`'s unbiased draw).
    mutating func roughChance(_ percent: Int) -> Bool { int(0...99) < percent }
}

/// Fixed times and rules the tests share.
enum Fixture {
    /// 2023-11-14T22:13:20Z: any realistic epoch time; deadlines are absolute milliseconds.
    static let start: Int64 = 1_700_000_000_000
    static let second: Int64 = 1_000
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    /// Long enough that no download period runs out during a test.
    static let never: Int64 = 10 * 365 * 24 * hour

    static let wired = UplinkRules(name: "eth0", networkClass: "wired", cost: 0)
    static let wifi = UplinkRules(name: "wlan0", networkClass: "wifi", cost: 1)
    static let cellular = UplinkRules(name: "wwan0", networkClass: "cellular", cost: 2)
    static let classes = ["wired", "wifi", "cellular"]

    /// A table for upload tests: pulls never fall due.
    static func table(
        _ name: String, maxDelay: Int64, uploads: Set<String>, period: Int64 = never, downloads: Set<String>? = nil
    ) -> TableRules {
        TableRules(
            name: name, maxDelay: maxDelay, uploadNetworks: uploads, period: period,
            downloadNetworks: downloads ?? uploads)
    }

    /// Pending rows as the gateway reports them.
    static func pending(rows: Int64 = 1, bytes: Int64 = 100, since: Int64) -> PendingUploads {
        PendingUploads(rows: rows, bytes: bytes, oldestFirstDirtyAt: since)
    }
}

/// The wake in a decision, if it is one.
func wake(in decision: Decision) -> Wake? {
    if case .wake(let wake) = decision { return wake }
    return nil
}

/// The minimum number of points that stab every interval, and the points: the textbook greedy
/// (sort by right end, stab the right end of the first interval not yet stabbed).
func stabbingOptimum(_ intervals: [(start: Int64, end: Int64)]) -> [Int64] {
    var points: [Int64] = []
    for interval in intervals.sorted(by: { $0.end < $1.end }) {
        if let last = points.last, interval.start <= last { continue }
        points.append(interval.end)
    }
    return points
}

/// Each write as the interval in which it may go up: [written, written + its table's max delay].
func deadlineIntervals(_ writes: [TraceWrite], _ tables: [TableRules]) -> [(start: Int64, end: Int64)] {
    let maxDelay = Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0.maxDelay) })
    return writes.map { ($0.at, $0.at + maxDelay[$0.table]!) }
}

/// Random tables `t0`… with max delays of 1 s to 10 min, the upload classes `classes` picks,
/// and the download classes `downloads` picks (the upload classes if nil).
func randomTables(
    _ rng: inout SplitMix64, count: ClosedRange<Int> = 1...6, classes: (inout SplitMix64) -> Set<String>,
    downloads: ((inout SplitMix64) -> Set<String>)? = nil
) -> [TableRules] {
    (0..<rng.int(count)).map { index in
        let maxDelay = rng.int(Fixture.second...10 * Fixture.minute)
        let uploads = classes(&rng)
        return Fixture.table("t\(index)", maxDelay: maxDelay, uploads: uploads, downloads: downloads?(&rng))
    }
}

/// 5–300 writes over the hour after `Fixture.start`, to few enough rows that many coalesce.
func randomWrites(_ rng: inout SplitMix64, tables: [TableRules], count: ClosedRange<Int> = 5...300) -> [TraceWrite] {
    (0..<rng.int(count)).map { _ in
        TraceWrite(
            at: Fixture.start + rng.int(0...Fixture.hour), table: tables[rng.int(0...(tables.count - 1))].name,
            row: rng.int(0...30), bytes: rng.int(10...500))
    }
}

/// A non-empty random subset of the three classes.
func randomClasses(_ rng: inout SplitMix64) -> Set<String> {
    while true {
        let picked = Set(Fixture.classes.filter { _ in rng.roughChance(50) })
        if !picked.isEmpty { return picked }
    }
}
