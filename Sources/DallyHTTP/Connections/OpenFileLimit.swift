#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's open-files limit, raised at start so that long-polls are bounded by memory
/// rather than by a conservative default soft limit.
public struct OpenFileLimit: Sendable {
    public let soft: Int
    public let hard: Int

    /// Descriptors kept back from long-polls for the database, the listener, logs and
    /// ordinary requests.
    public static let reserved = 256

    /// Raises the soft limit to the hard limit (where allowed) and reports both.
    public static func raise() -> OpenFileLimit {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return OpenFileLimit(soft: 1024, hard: 1024) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        let clamp = { (value: rlim_t) -> Int in value > rlim_t(Int32.max) ? Int(Int32.max) : Int(value) }
        return OpenFileLimit(soft: clamp(limit.rlim_cur), hard: clamp(limit.rlim_max))
    }

    /// The most long-polls that fit: one descriptor each, less the reserve; `configured`
    /// when it is set and smaller.
    public func maxWaiters(configured: Int) -> Int {
        let fit = max(16, soft - Self.reserved)
        return configured > 0 ? min(configured, fit) : fit
    }
}
