import DallyCore

/// What a TinySync request's writes to one table did: each saved row's id with the sequence
/// its write took (0 for a delete of a row that was never here), and each refused row's error.
public struct TinySyncSaveOutcome: Sendable {
    public var saved: [(id: String, seq: Int64)] = []
    public var errors: [BatchOutcome.RowError] = []

    public init() {}
}
