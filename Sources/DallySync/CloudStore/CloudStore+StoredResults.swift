extension CloudStore {
    /// What the store remembers of batch `batchID` from `gateway`, or nil when it holds no
    /// answer for it (never received, a pull, or forgotten after the retention period).
    ///
    /// The default remembers nothing: a store that does not implement it makes every gateway
    /// resend a cut batch whole (correct, only not frugal); `apply` stays the one place where a
    /// retry is recognised.
    public func storedResults(gateway: String, batchID: String) async throws -> StoredBatchResults? { nil }
}
