import Foundation
import Logging
import ServiceLifecycle

/// Runs a set of services (a cloud's or a gateway's) in their own group until stopped, and
/// reports the port the HTTP server bound. Start and stop may alternate, for tests that take
/// a server down and bring it back on the same port.
final class LiveServer: @unchecked Sendable {
    private var group: ServiceGroup?
    private var task: Task<Void, any Error>?
    private(set) var port = 0

    /// Starts the services `make` returns; `make` receives the callback that reports the port.
    func start(_ make: (@escaping @Sendable (Int) async -> Void) throws -> [any Service]) async throws {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let services = try make { port in continuation.yield(port) }
        let group = ServiceGroup(configuration: .init(services: services, logger: Logger(label: "test")))
        self.group = group
        task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        self.port = port
    }

    /// Stops the services gracefully and waits until they have.
    func stop() async throws {
        await group?.triggerGracefulShutdown()
        try await task?.value
        group = nil
        task = nil
    }
}
