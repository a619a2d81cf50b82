import DallyCore

/// Why an exchange with the cloud failed.
public enum CloudError: Error, Sendable, CustomStringConvertible {
    /// No answer: connection refused, reset, timed out. Retried with backoff.
    case unreachable(String)
    /// The cloud answered with an error: its status, its stable code (nil for a code this
    /// build does not know, which the message then names) and message. 5xx is retried; 4xx is
    /// retried too (a configuration may be fixed meanwhile), but logged as an error.
    case refused(status: Int, code: DallyError.Code?, message: String)
    /// The cloud's answer could not be read.
    case badAnswer(String)

    public var description: String {
        switch self {
        case .unreachable(let reason): "cloud unreachable: \(reason)"
        case .refused(let status, let code, let message):
            "cloud refused (\(status) \(code?.rawValue ?? "unknown code")): \(message)"
        case .badAnswer(let reason): "cloud answer unreadable: \(reason)"
        }
    }
}
