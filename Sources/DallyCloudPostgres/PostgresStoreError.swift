/// Why the PostgreSQL store could not open: the database is unreachable, refused the login,
/// or holds tables the configuration is incompatible with. The message says what to fix and
/// never holds the password.
public struct PostgresStoreError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// True when the database could not be reached at all (as opposed to refusing something).
    public let unreachable: Bool

    public init(_ message: String, unreachable: Bool = false) {
        self.message = message
        self.unreachable = unreachable
    }

    public var description: String { message }
}
