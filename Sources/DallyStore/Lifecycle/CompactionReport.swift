/// What one upkeep pass removed from the replica, per table.
public struct CompactionReport: Sendable, Equatable {
    public var tombstonesPurged: [String: Int64] = [:]
    public var retainedRemoved: [String: Int64] = [:]

    public init() {}

    public var isEmpty: Bool { tombstonesPurged.isEmpty && retainedRemoved.isEmpty }
}
