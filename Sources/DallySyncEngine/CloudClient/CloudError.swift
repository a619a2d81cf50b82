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

    /// Whether the cloud itself gave no answer: no connection or no reply, or a proxy in
    /// front of it answering that it could not reach it (502, 503, 504 without a code of
    /// Dally's). The probe then looks for the cloud every `down_probe_interval`. The cloud's own
    /// 503 (shutting down, its database lost) is an answer: the cloud is there, and the
    /// retry backoff paces the next request.
    public var cloudDidNotAnswer: Bool {
        switch self {
        case .unreachable: true
        case .refused(let status, let code, _): code == nil && [502, 503, 504].contains(status)
        case .badAnswer: false
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let reason): "cloud unreachable: \(reason)"
        case .refused(let status, let code, let message):
            "cloud refused (\(status) \(code?.rawValue ?? "unknown code")): \(message)"
        case .badAnswer(let reason): "cloud answer unreadable: \(reason)"
        }
    }
}
