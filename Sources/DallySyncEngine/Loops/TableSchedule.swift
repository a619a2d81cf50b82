/// A table's schedule at the moment of asking: its delay and the deadlines it missed.
public struct TableSchedule: Sendable {
    public let maxDelayMs: Int64
    public let deadlineMisses: Int64
}
