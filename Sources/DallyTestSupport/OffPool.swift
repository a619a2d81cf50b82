import Foundation

/// Runs blocking `body` (a child process, `initdb`, a polling loop) on a thread of its own and
/// awaits it, so that it does not hold a thread of Swift's cooperative pool.
///
/// The pool has one thread per core: two here. Two tests blocking both of them stop every
/// other test of the process, including NIO-driven relays whose peers then time out; a stall
/// of about a minute at the start of a full run (PostgreSQL's `initdb` under load) failed relay
/// tests that way.
///
/// ```swift
/// let database = try await offPool { try PostgresCluster.shared().createDatabase() }
/// ```
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}
