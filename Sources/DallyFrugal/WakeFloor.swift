/// The fewest wake-ups any uplink could make and still send every write by its deadline: the
/// floor the benchmark's wake counts are compared with.
///
/// A write at `t` to a table with max delay `d` must leave in `[t, t + d]`; a wake at a moment
/// sends everything pending, so the fewest wakes is the fewest moments ("stabs") such that each
/// write's interval contains one — the interval-stabbing number. Greedy by earliest deadline,
/// stabbing at that deadline, attains it (Danzer 1956; the textbook exchange argument).
///
/// Some writes may only leave while a window is open (wifi-only tables while wifi comes and
/// goes). For those, a stab counts only at a moment inside a window; ``minimumWakeUps(_:windows:)``
/// finds the exact minimum when both kinds are mixed (see there). All times are integer
/// milliseconds; a window `a..<b` admits the moments `a...b-1`.
public enum WakeFloor {
    /// The moments a write may leave: `release...deadline`, and, if `needsWindow`, only while
    /// a window is open.
    public struct Interval: Sendable, Equatable {
        public var release: Int64
        public var deadline: Int64
        public var needsWindow: Bool

        public init(release: Int64, deadline: Int64, needsWindow: Bool = false) {
            self.release = release
            self.deadline = deadline
            self.needsWindow = needsWindow
        }
    }

    /// The stabbing moments of the greedy solution for intervals that may leave at any moment:
    /// sorted by deadline, each interval not yet stabbed is stabbed at its deadline. Its count
    /// is the minimum.
    public static func stabs(_ intervals: [Interval]) -> [Int64] {
        var points: [Int64] = []
        var last = Int64.min
        for interval in intervals.sorted(by: { $0.deadline < $1.deadline }) where interval.release > last {
            last = interval.deadline
            points.append(last)
        }
        return points
    }

    /// The fewest stabs such that every interval contains one, and every interval that
    /// `needsWindow` contains one inside `windows`.
    ///
    /// An interval whose deadline is before its release is taken as due at its release. An
    /// interval that needs a window but lies wholly in an outage cannot leave in time at
    /// all; it is counted as due at the next moment a window opens (the earliest it can leave),
    /// or dropped if none ever does.
    ///
    /// With both kinds mixed, stabbing at the earliest deadline is no longer always right (a
    /// stab inside a window a little earlier may also catch a window-only interval), so this
    /// keeps, in deadline order, every undominated partial solution: its stab count, its latest
    /// stab, and its latest stab inside a window — all that decides which later intervals are
    /// already stabbed. An unstabbed interval takes one more stab either at its deadline or at
    /// its latest in-window moment (any other choice is dominated by one of those two), and
    /// solutions two stabs worse than the best are dropped (two stabs at the current deadline
    /// and latest window moment would dominate them). The sets stay a handful of entries long.
    public static func minimumWakeUps(_ intervals: [Interval], windows: [Range<Int64>]) -> Int {
        let openings = Openings(windows)
        var due: [Interval] = []
        due.reserveCapacity(intervals.count)
        for var interval in intervals {
            interval.deadline = max(interval.deadline, interval.release)
            if interval.needsWindow, openings.latest(in: interval.release...interval.deadline) == nil {
                guard let next = openings.next(after: interval.deadline) else { continue }
                interval.deadline = next
            }
            due.append(interval)
        }
        due.sort { $0.deadline < $1.deadline }

        var states = [Partial(count: 0, last: .min, lastInWindow: .min)]
        for interval in due {
            var next: [Partial] = []
            next.reserveCapacity(states.count * 2)
            let inWindow = openings.latest(in: interval.release...interval.deadline)
            for state in states {
                if interval.needsWindow {
                    guard state.lastInWindow < interval.release, let moment = inWindow else {
                        next.append(state)
                        continue
                    }
                    next.append(Partial(count: state.count + 1, last: max(state.last, moment), lastInWindow: moment))
                } else {
                    guard state.last < interval.release else {
                        next.append(state)
                        continue
                    }
                    let deadline = interval.deadline
                    let deadlineInWindow = inWindow == deadline
                    next.append(
                        Partial(
                            count: state.count + 1, last: deadline,
                            lastInWindow: deadlineInWindow ? deadline : state.lastInWindow))
                    if let moment = inWindow, moment != deadline {
                        next.append(Partial(count: state.count + 1, last: moment, lastInWindow: moment))
                    }
                }
            }
            states = Partial.undominated(next)
        }
        return states.map(\.count).min() ?? 0
    }

    /// The floor of a trace's wake-ups: the writes' intervals (release at the write, deadline
    /// its table's max delay later) stabbed as few times as possible.
    ///
    /// - With `allClassesUp`, every table may go over a class that is always up (cellular, or
    ///   wifi with ``WifiPattern/always``), so this is the plain stabbing number of all writes.
    /// - Otherwise wifi-only tables' writes must leave while wifi is up (``FrugalTrace/wifiUp``;
    ///   a stretch reaching the end stays up), the others at any time, and this is
    ///   ``minimumWakeUps(_:windows:)``: the exact minimum number of *moments* at which some
    ///   radio sends. A wifi-only write whose whole interval falls in an outage counts as due
    ///   when wifi next comes up. It is a floor for any uplink, whichever radios it uses: a
    ///   moment in a wifi stretch can carry every table over wifi, so no schedule needs two
    ///   radios awake at once to reach it.
    public static func minimumWakeUps(trace: FrugalTrace, allClassesUp: Bool) -> Int {
        let delays = Dictionary(trace.tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let intervals = trace.writes.compactMap { write -> Interval? in
            guard let table = delays[write.table] else { return nil }
            return Interval(
                release: write.at, deadline: write.at + table.maxDelay,
                needsWindow: !allClassesUp && !table.allowsCellular)
        }
        if allClassesUp { return stabs(intervals).count }
        let windows = trace.wifiUp.map { $0.upperBound >= trace.duration ? $0.lowerBound..<Int64.max : $0 }
        return minimumWakeUps(intervals, windows: windows)
    }

    /// One partial solution: how many stabs, the latest, and the latest inside a window.
    private struct Partial: Equatable {
        var count: Int
        var last: Int64
        var lastInWindow: Int64

        func dominates(_ other: Partial) -> Bool {
            count <= other.count && last >= other.last && lastInWindow >= other.lastInWindow
        }

        /// The states not dominated by another, keeping only counts within one of the best.
        static func undominated(_ states: [Partial]) -> [Partial] {
            guard let best = states.map(\.count).min() else { return [] }
            let ordered = states.filter { $0.count <= best + 1 }.sorted { a, b in
                if a.count != b.count { return a.count < b.count }
                if a.last != b.last { return a.last > b.last }
                return a.lastInWindow > b.lastInWindow
            }
            var kept: [Partial] = []
            for state in ordered where !kept.contains(where: { $0.dominates(state) }) { kept.append(state) }
            return kept
        }
    }

    /// The windows, sorted, answering "the latest open moment in a range" and "the next opening".
    private struct Openings {
        let windows: [Range<Int64>]

        /// Sorts the windows and merges those that overlap or touch.
        init(_ windows: [Range<Int64>]) {
            var merged: [Range<Int64>] = []
            for window in windows.filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let last = merged.last, window.lowerBound <= last.upperBound {
                    merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, window.upperBound)
                } else {
                    merged.append(window)
                }
            }
            self.windows = merged
        }

        /// The latest moment of `range` inside a window, if any.
        func latest(in range: ClosedRange<Int64>) -> Int64? {
            // The last window starting at or before the range's end.
            var low = 0
            var high = windows.count
            while low < high {
                let middle = (low + high) / 2
                if windows[middle].lowerBound <= range.upperBound { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            // Windows are disjoint and sorted: if this one ends before the range starts, so do
            // all before it.
            let moment = min(range.upperBound, windows[low - 1].upperBound - 1)
            return moment >= range.lowerBound ? moment : nil
        }

        /// The first moment after `time` at which a window opens.
        func next(after time: Int64) -> Int64? {
            windows.first { $0.lowerBound > time }?.lowerBound
        }
    }
}
