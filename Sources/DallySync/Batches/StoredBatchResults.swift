/// What the cloud remembers of a batch it applied: the fingerprint of the body it received and
/// the per-row results it answered, as stored (``BatchAnswer/decodeResults(_:outline:)`` reads
/// them against the batch's outline).
public struct StoredBatchResults: Sendable, Equatable {
    public var fingerprint: UInt64
    /// The `results` array of the answer, as JSON text.
    public var results: [UInt8]

    public init(fingerprint: UInt64, results: [UInt8]) {
        self.fingerprint = fingerprint
        self.results = results
    }
}
