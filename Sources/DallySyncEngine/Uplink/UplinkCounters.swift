/// What one uplink has done since start, for `/stats` and `/metrics`.
struct UplinkCounters: Sendable {
    /// Cycles the scheduler started on this uplink: each a radio wake-up.
    var wakeUps: Int64 = 0
    var requests: Int64 = 0
    var failures: Int64 = 0
    /// Bodies as they crossed the wire (compressed).
    var bytesUp: Int64 = 0
    var bytesDown: Int64 = 0
    /// Batches sent again on this uplink after an unanswered attempt on it (or before a
    /// restart), and batches it took over from another uplink.
    var retries: Int64 = 0
    var rerouted: Int64 = 0
    var probes: Int64 = 0
    var probeFailures: Int64 = 0
    var availabilityChanges: Int64 = 0
    /// Notify long-polls held over this uplink.
    var notifyPolls: Int64 = 0

    var all: [(String, Int64)] {
        [
            ("wake_ups", wakeUps), ("requests", requests), ("failures", failures), ("bytes_up", bytesUp),
            ("bytes_down", bytesDown), ("retries", retries), ("rerouted", rerouted), ("probes", probes),
            ("probe_failures", probeFailures), ("availability_changes", availabilityChanges),
            ("notify_polls", notifyPolls),
        ]
    }
}
