import PostgresNIO
import Synchronization

/// The pooled connection an operation was handed, if any yet: the deadline closes it, so
/// that a statement that never ends fails and the pool gets the connection back.
final class LeaseMark: Sendable {
    private let connection = Mutex<PostgresConnection?>(nil)
    var isSet: Bool { connection.withLock { $0 != nil } }
    /// Whether the connection handed out has closed: no statement on it can end any more.
    var isClosed: Bool { connection.withLock { $0?.isClosed ?? false } }
    func set(_ leased: PostgresConnection) { connection.withLock { $0 = leased } }
    func close() { connection.withLock { $0 }?.close().whenComplete { _ in } }
}
