import Synchronization

/// Whether the database answers, as the commit listener last found it: its connection is the
/// first to notice PostgreSQL going away (the socket closes) and coming back (it reconnects).
///
/// While it is down, store operations fail at once with `store_unavailable` instead of
/// queueing for a pooled connection, which the pool would hold for up to a minute while it
/// retries; the gateway then resends to another node or after `Retry-After`.
final class DatabaseReachability: Sendable {
    private let reachable = Atomic<Bool>(true)

    var isReachable: Bool { reachable.load(ordering: .acquiring) }

    func set(_ value: Bool) { reachable.store(value, ordering: .releasing) }
}
