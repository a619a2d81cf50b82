/// Why the replica cannot be opened or used, with what to do about it.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
