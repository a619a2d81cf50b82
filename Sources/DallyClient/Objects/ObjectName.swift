/// `{"hash": …}`: how a row write names an object uploaded before (the gateway fills in its size
/// and chunks).
public struct ObjectName: Codable, Sendable, Equatable {
    /// The object's SHA-256, 64 hex digits.
    public let hash: String
}
