/// Capped exponential backoff with full jitter: after the n-th consecutive failure, wait a
/// random time up to `min(maximum, minimum × 2ⁿ⁻¹)`, never less than `minimum`.
///
/// Full jitter spreads the retries of many gateways that lost the cloud at the same moment,
/// so that they do not all come back at once when it returns.
struct Backoff: Sendable {
    let minimum: Duration
    let maximum: Duration

    /// - Parameter unit: a random number in `0..<1`.
    func delay(afterFailures failures: Int, unit: Double) -> Duration {
        guard failures > 0 else { return .zero }
        return max(minimum, ceiling(afterFailures: failures) * unit)
    }

    /// The longest wait after the n-th consecutive failure: `min(maximum, minimum × 2ⁿ⁻¹)`.
    func ceiling(afterFailures failures: Int) -> Duration {
        min(maximum, minimum * Double(1 << min(max(failures, 1) - 1, 30)))
    }
}
