import Logging
import ServiceLifecycle
import Synchronization

/// Services (a cloud's, gateways', a proxy's) running in their own group until ``stop()``, and
/// the ports their HTTP servers bound. Start and stop may alternate, for tests that take a
/// server down and bring it back on the same port.
///
/// For example:
/// ```swift
/// let runner = ServiceRunner()
/// try await runner.start { report in
///     [gateway.application(port: 0) { port in await report(port) }, gateway.hub]
/// }
/// // … talk to 127.0.0.1:\(runner.port) …
/// try await runner.stop()
/// ```
public final class ServiceRunner: Sendable {
    private struct Running: Sendable {
        let group: ServiceGroup
        let task: Task<Void, any Error>
    }

    /// The services stopped before every HTTP server reported its port.
    public struct StoppedEarly: Error, CustomStringConvertible {
        public var description: String { "the services stopped before their servers listened" }
    }

    private let label: String
    private let gracefulShutdownLimit: Duration?
    private let running = Mutex<Running?>(nil)
    private let boundPorts = Mutex<[Int]>([])

    /// A runner whose groups log as `label`; with `gracefulShutdownLimit`, a service that
    /// ignores the shutdown request (a long-poll it cannot cut short) is cancelled after that
    /// long, so a benchmark process always exits.
    public init(label: String = "test", gracefulShutdownLimit: Duration? = nil) {
        self.label = label
        self.gracefulShutdownLimit = gracefulShutdownLimit
    }

    /// The bound port of each server of the last start, by the index it reported itself with.
    public var ports: [Int] { boundPorts.withLock { $0 } }

    /// The bound port of the first (usually the only) server.
    public var port: Int { ports.first ?? 0 }

    /// Runs the services `make` returns and waits until `servers` HTTP servers listen; `make`
    /// receives the callback each server reports `(its index, its port)` through.
    ///
    /// - Throws: what `make` throws; the group's error, or ``StoppedEarly``, if the services
    ///   stop before every server listens.
    public func start(
        servers: Int, _ make: (@escaping @Sendable (Int, Int) async -> Void) throws -> [any Service]
    ) async throws {
        let (reports, continuation) = AsyncStream<(Int, Int)>.makeStream()
        let services = try make { index, port in continuation.yield((index, port)) }
        var configuration = ServiceGroupConfiguration(services: services, logger: Logger(label: label))
        if let gracefulShutdownLimit { configuration.maximumGracefulShutdownDuration = gracefulShutdownLimit }
        let group = ServiceGroup(configuration: configuration)
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        running.withLock { $0 = Running(group: group, task: task) }
        var ports = Array(repeating: 0, count: servers)
        var reported = 0
        for await (index, port) in reports where ports.indices.contains(index) {
            ports[index] = port
            reported += 1
            if reported == servers { break }
        }
        guard reported == servers else {
            try await task.value
            throw StoppedEarly()
        }
        boundPorts.withLock { $0 = ports }
    }

    /// Runs the services `make` returns and waits until their one HTTP server listens; `make`
    /// receives the callback that server reports its port through.
    public func start(_ make: (@escaping @Sendable (Int) async -> Void) throws -> [any Service]) async throws {
        try await start(servers: 1) { report in try make { port in await report(0, port) } }
    }

    /// A runner already running the services `make` returns, once `servers` servers listen.
    public static func started(
        servers: Int, label: String = "test", gracefulShutdownLimit: Duration? = nil,
        _ make: (@escaping @Sendable (Int, Int) async -> Void) throws -> [any Service]
    ) async throws -> ServiceRunner {
        let runner = ServiceRunner(label: label, gracefulShutdownLimit: gracefulShutdownLimit)
        try await runner.start(servers: servers, make)
        return runner
    }

    /// Stops the services gracefully and waits until they have; does nothing if none run.
    public func stop() async throws {
        let current = running.withLock { running in
            defer { running = nil }
            return running
        }
        guard let current else { return }
        await current.group.triggerGracefulShutdown()
        try await current.task.value
    }
}
