/// How far an object transfer is: bytes done, of how many when known.
///
/// For example:
/// ```swift
/// try await photos.downloadObject(id: "p1", column: "image", to: path) { progress in
///     print("\(progress.completed) / \(progress.total ?? -1)")
/// }
/// ```
public struct TransferProgress: Sendable, Equatable {
    /// Bytes sent or received so far (for a resumed download, counting the bytes kept from before).
    public let completed: Int64
    /// The object's size, when known.
    public let total: Int64?

    /// A report of `completed` bytes of `total`.
    public init(completed: Int64, total: Int64?) {
        self.completed = completed
        self.total = total
    }

    /// `completed / total` in 0...1, nil when the total is unknown.
    public var fraction: Double? {
        guard let total, total > 0 else { return total == 0 ? 1 : nil }
        return Double(completed) / Double(total)
    }
}

/// A callback told of each piece transferred.
public typealias ProgressHandler = @Sendable (TransferProgress) -> Void
