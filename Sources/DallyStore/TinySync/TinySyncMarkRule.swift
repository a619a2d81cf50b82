/// The pure rules behind TinySync marks: which time a new answer hands out, where a time a
/// client sends resumes, and which old marks are kept.
///
/// For example, two answers in the same millisecond get different times, and a time between
/// marks resumes at the earlier one (it may repeat rows, never miss one):
///
/// ```swift
/// TinySyncMarkRule.nextTime(now: 1_000, latest: 1_000)                        // 1_001
/// TinySyncMarkRule.resumeSeq(for: 1_500, marks: [.init(at: 1_000, seq: 7),
///                                                .init(at: 2_000, seq: 9)])   // 7
/// ```
public enum TinySyncMarkRule {
    /// The newest marks, all kept: every client syncing at a usual pace finds its exact mark.
    public static let denseMarks = 1024
    /// Beyond the dense marks, one mark is kept per this many milliseconds (one hour): a client
    /// back after a long absence is resent at most about an hour of changes it already has.
    public static let sparseSpacingMillis: Int64 = 3_600_000
    /// Beyond the dense marks, marks older than this (30 days) are dropped: such a client gets
    /// everything in its scope again.
    public static let horizonMillis: Int64 = 30 * 86_400_000

    /// The time of a new mark: the wall clock, or 1 ms after the latest mark when the clock has
    /// not passed it (two answers in one millisecond, or a clock set back), so that marks are
    /// strictly increasing and each time names one cursor.
    public static func nextTime(now: Int64, latest: Int64?) -> Int64 {
        guard let latest, latest >= now else { return now }
        return latest + 1
    }

    /// The sequence a client's `last_synced` resumes after: the greatest mark's at or before
    /// it; nil when there is none, and the answer starts from the beginning.
    ///
    /// Exact for a time this gateway handed out and still keeps. For any other time (made by
    /// the client, truncated to seconds, or a pruned mark's), the mark found is earlier, and
    /// every change committed after it has a greater sequence: the answer may repeat rows the
    /// client has, and never misses one.
    ///
    /// - Parameter marks: in any order.
    public static func resumeSeq(for time: Int64, marks: [TinySyncMark]) -> Int64? {
        marks.filter { $0.at <= time }.max { $0.at < $1.at }?.seq
    }

    /// Of the marks older than the dense ones, those to delete at `now`: those past the
    /// horizon, and all but the earliest in each spacing interval.
    ///
    /// Dropping a mark is always safe: a client that sends its time back resumes at an earlier
    /// mark and is resent rows, never skips them.
    public static func prunable(_ old: [TinySyncMark], now: Int64) -> [Int64] {
        var keptBucket: Set<Int64> = []
        var drop: [Int64] = []
        for mark in old.sorted(by: { $0.at < $1.at }) {
            if mark.at < now - horizonMillis {
                drop.append(mark.at)
            } else if !keptBucket.insert(floorDivide(mark.at, sparseSpacingMillis)).inserted {
                drop.append(mark.at)
            }
        }
        return drop
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && a < 0) ? q - 1 : q
    }
}
