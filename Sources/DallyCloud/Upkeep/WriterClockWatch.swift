import DallySync
import Logging
import Synchronization

/// Logs the changes a gateway stamped too far ahead of the cloud's clock
/// (``DallySync/BatchRequest/limitWriterClocks(to:arrival:)``) once every ten minutes per
/// gateway, so that an operator sets that gateway's clock without the log filling up.
final class WriterClockWatch: Sendable {
    static let warningInterval: Int64 = 600_000

    /// Per gateway, when its clock was last warned about.
    private let warnedAt = Mutex<[String: Int64]>([:])
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func saw(_ ahead: BatchRequest.ClockedAhead, from gateway: String, now: Int64) {
        guard ahead.changes > 0 else { return }
        let warn = warnedAt.withLock { all in
            let due = all[gateway].map { now - $0 >= Self.warningInterval } ?? true
            if due { all[gateway] = now }
            return due
        }
        guard warn else { return }
        logger.warning(
            "a gateway's clock is ahead of the cloud's: its changes are taken as made when they arrived; set its clock (NTP)",
            metadata: [
                "gateway": "\(gateway)", "ahead_s": "\(ahead.aheadMs / 1000)", "changes": "\(ahead.changes)",
            ])
    }
}
