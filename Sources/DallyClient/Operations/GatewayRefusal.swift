import DallyCore

/// A gateway's error answer: `{"error":{"code","message","field"}}` and its status.
///
/// For example: `refusal.code == .unknownColumn`, `refusal.field == "colour"`.
public struct GatewayRefusal: Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status (400, 401, 403, 404, 409, 413, 415, 416, 422, 503, 504, 500).
    public let status: Int
    /// The stable code as sent, also for codes newer than this library.
    public let codeName: String
    /// The code, nil for one this library does not know yet (read ``codeName``).
    public var code: DallyError.Code? { DallyError.Code(rawValue: codeName) }
    /// What the gateway says went wrong, for a person.
    public let message: String
    /// The column, parameter or key at fault, when one is.
    public let field: String?
    /// `Retry-After` in seconds, when the gateway sent it (`too_many_waiters`).
    public let retryAfter: Int?

    /// A refusal with these parts (a transport or a test may make one).
    public init(status: Int, codeName: String, message: String, field: String?, retryAfter: Int? = nil) {
        self.status = status
        self.codeName = codeName
        self.message = message
        self.field = field
        self.retryAfter = retryAfter
    }

    public var description: String {
        let at = field.map { " (\($0))" } ?? ""
        return "\(codeName)\(at) [\(status)]: \(message)"
    }
}
