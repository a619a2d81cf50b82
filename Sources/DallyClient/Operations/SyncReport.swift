/// The counts of one sync-now: changes sent, accepted by the cloud, in conflict, rejected, and
/// rows received from it.
public struct SyncReport: Codable, Sendable, Equatable {
    /// Changes sent to the cloud.
    public let sent: Int
    /// Of those, accepted.
    public let accepted: Int
    /// Of those, in conflict (see ``DallyClient/conflicts(table:includeSettled:limit:)``).
    public let conflicts: Int
    /// Of those, refused by the cloud.
    public let rejected: Int
    /// Rows received from the cloud.
    public let received: Int
}
