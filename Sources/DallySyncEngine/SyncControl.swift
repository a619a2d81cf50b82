import DallyCore
import DallyScheduler

/// What the HTTP routes and stats need of a running syncer, whatever its clock.
public protocol SyncControl: Sendable {
    /// Sends the table's pending changes and pulls it now, over the networks its policy allows.
    func syncNow(table: String) async -> SyncOutcome
    var status: SyncStatus { get }
    var uplinkSnapshots: [UplinkSnapshot] { get }
    var tableSchedules: [String: TableSchedule] { get }
    func setAvailability(uplink: String, to mode: AvailabilityOverride) throws(DallyError) -> UplinkSnapshot
    /// Whether the decision loop waits with nothing to do until its planned time or a change.
    var isQuiet: Bool { get }
}
