import DallyStore

/// The outcome of a sync-now request.
public enum SyncOutcome: Sendable {
    /// The cycle completed: what it sent and received.
    case synced(SyncReport)
    /// The cycle failed; the changes stay queued and are retried with backoff.
    case queued(String)
}
