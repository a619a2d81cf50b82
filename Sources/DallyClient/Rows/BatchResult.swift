/// The gateway's answer to a batch: the ids saved, the rows refused and why, and the highest
/// sequence number written.
///
/// For example:
/// ```swift
/// let result = try await orders.batch(batch)
/// if result.errors.isEmpty { print("all \(result.saved.count) saved up to seq \(result.seq)") }
/// for refusal in result.errors where refusal.code == .wrongType { print(refusal.field ?? "", refusal.message) }
/// ```
public struct BatchResult: Codable, Sendable, Equatable {
    /// The ids written, in the order the writes were applied (an id written twice shows twice).
    public let saved: [String]
    /// The rows refused; with `allOrNothing`, non-empty means nothing was saved.
    public let errors: [RowRefusal]
    /// The highest local sequence number the batch wrote.
    public let seq: Int64
}
