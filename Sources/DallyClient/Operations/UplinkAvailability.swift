/// An uplink's availability override.
///
/// For example: `try await admin.setUplink("lte", availability: .unavailable)`.
public enum UplinkAvailability: String, Codable, Sendable, CaseIterable {
    /// Follow the probe.
    case auto
    /// Take it as up (also ends a retry backoff).
    case available
    /// Take it as down.
    case unavailable
}
