extension Clock where Duration == Swift.Duration {
    /// Sleeps `duration` on this clock; false when the task was cancelled meanwhile.
    func pause(for duration: Duration) async -> Bool {
        await pause(until: now.advanced(by: duration))
    }

    /// Sleeps until `deadline` on this clock; false when the task was cancelled meanwhile.
    func pause(until deadline: Instant) async -> Bool {
        do {
            try await sleep(until: deadline, tolerance: nil)
            return true
        } catch {
            return false
        }
    }
}
