import Foundation
import Logging
import ServiceLifecycle

/// Durations of one kind, in milliseconds.
struct Samples {
    private(set) var values: [Double] = []

    mutating func add(_ duration: Duration) { values.append(duration.benchMilliseconds) }

    mutating func merge(_ other: Samples) { values += other.values }

    var count: Int { values.count }
    var total: Double { values.reduce(0, +) }

    /// The nearest-rank percentile `p` (0...100); 0 when empty.
    func percentile(_ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(Swift.max(rank, 1), sorted.count) - 1]
    }

    var max: Double { values.max() ?? 0 }
}
