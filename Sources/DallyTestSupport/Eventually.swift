/// Polls `condition` every millisecond or so until it holds or `timeout` passes: for waiting
/// on something another process or connection does, without a fixed sleep.
///
/// - Returns: whether the condition held in time.
public func eventually(
    within timeout: Duration = .seconds(10), _ condition: @Sendable () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return try await condition()
}
