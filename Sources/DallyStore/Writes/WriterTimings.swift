import Synchronization

/// How long local writes waited for their commit and how long sync work held SQLite's writer,
/// as operators see it in `/stats` and `/metrics`.
///
/// A local write's wait runs from the moment it was queued to the moment its transaction
/// committed (fsync included): what a client's write spends in the database layer. Both are
/// kept as cumulative histograms over fixed bounds, as Prometheus expects.
public final class WriterTimings: Sendable {
    /// Upper bounds of the histogram buckets, in milliseconds.
    public static let boundsMs: [Double] = [0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000]

    /// One histogram: counts per bucket (not cumulative; the last one counts what is above every
    /// bound), the sum and the largest value seen, in milliseconds.
    public struct Histogram: Sendable, Equatable {
        public internal(set) var buckets: [Int64] = Array(repeating: 0, count: WriterTimings.boundsMs.count + 1)
        public internal(set) var count: Int64 = 0
        public internal(set) var sumMs: Double = 0
        public internal(set) var maxMs: Double = 0

        public init() {}

        mutating func record(_ duration: Duration) {
            let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
            let index = WriterTimings.boundsMs.firstIndex { ms <= $0 } ?? WriterTimings.boundsMs.count
            buckets[index] += 1
            count += 1
            sumMs += ms
            maxMs = max(maxMs, ms)
        }

        /// Counts of values at or under each bound, then the total (`+Inf`).
        public var cumulative: [Int64] {
            var running: Int64 = 0
            return buckets.map { count in
                running += count
                return running
            }
        }
    }

    public struct Snapshot: Sendable, Equatable {
        /// Local writes: from queued to committed.
        public internal(set) var localWaits = Histogram()
        /// Sync transactions: how long each held the writer, all steps together.
        public internal(set) var syncHolds = Histogram()
        /// The same per step.
        public internal(set) var syncHoldsByStep: [SyncStep: Histogram] = [:]
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    func recordLocalWait(_ duration: Duration) {
        state.withLock { $0.localWaits.record(duration) }
    }

    func recordSyncHold(_ duration: Duration, step: SyncStep) {
        state.withLock { snapshot in
            snapshot.syncHolds.record(duration)
            snapshot.syncHoldsByStep[step, default: Histogram()].record(duration)
        }
    }
}
