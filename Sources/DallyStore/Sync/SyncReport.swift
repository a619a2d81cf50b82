import DallyCore
import DallySync
import GRDB

/// What one exchange with the cloud did.
public struct SyncReport: Sendable, Equatable {
    public var sent = 0
    public var accepted = 0
    public var conflicts = 0
    public var rejected = 0
    /// Rows the cloud sent down that changed the replica.
    public var received = 0
    /// Whether the cloud answered from its record of an earlier attempt.
    public var replayed = false
    /// Whether a downstream page said more is waiting.
    public var more = false

    public init() {}

    public mutating func add(_ other: SyncReport) {
        sent += other.sent
        accepted += other.accepted
        conflicts += other.conflicts
        rejected += other.rejected
        received += other.received
        replayed = replayed || other.replayed
        more = other.more
    }
}
