import DallyCloud
import DallyConfig
import DallyGateway
import Foundation
import Logging

/// A real cloud and any number of real gateways on 127.0.0.1, configured from one
/// ``SystemConfig``, each with its own data directory under one temporary root. Servers start
/// and stop one by one, so a test can take the cloud or a gateway down and bring it back; the
/// cloud comes back on the same port.
///
/// For example:
/// ```swift
/// let system = LiveSystem(config: config)
/// try await system.startCloud()
/// try await system.startGateway("gw-a", try config.gateway(
///     "gw-a", dataDirectory: system.directory("gw-a"), link: .init(url: system.cloudURL)))
/// // … HTTP to system.port(of: "gw-a") …
/// try await system.shutdown()
/// ```
///
/// `@unchecked Sendable`: `Cloud` and `Gateway` are not `Sendable`, so the servers are kept
/// behind a lock that every access takes.
public final class LiveSystem: @unchecked Sendable {
    private struct Servers {
        var cloud: Cloud<ContinuousClock>?
        var gateways: [String: Gateway] = [:]
        var runners: [String: ServiceRunner] = [:]
    }

    /// The directory every server's data lives under; removed by ``shutdown(cloudFirst:)``
    /// when the system made it (a `root` passed in belongs to the caller).
    public let root: String
    private let ownsRoot: Bool
    public let config: SystemConfig
    /// Runs the cloud's services; its port stays the same across restarts.
    public let cloudRunner: ServiceRunner
    private let lock = NSLock()
    private var servers = Servers()
    private let label: String
    private let logLevel: Logger.Level?
    private let gracefulShutdownLimit: Duration?

    /// A system under a new temporary directory named `rootPrefix` and a UUID, or under `root`
    /// when given; servers log as `label`, at `logLevel` when given (else the logging system's
    /// default), and with `gracefulShutdownLimit` a service that ignores the shutdown request
    /// is cancelled after that long (see ``ServiceRunner``).
    public init(
        config: SystemConfig, rootPrefix: String = "dally-system-", root: String? = nil, label: String = "test",
        logLevel: Logger.Level? = nil, gracefulShutdownLimit: Duration? = nil
    ) {
        self.config = config
        self.label = label
        self.logLevel = logLevel
        self.gracefulShutdownLimit = gracefulShutdownLimit
        self.root = root ?? ScratchSpace.path(rootPrefix)
        ownsRoot = root == nil
        cloudRunner = ServiceRunner(label: label, gracefulShutdownLimit: gracefulShutdownLimit)
    }

    /// The logger a server of this system logs with.
    private func serverLogger() -> Logger {
        var logger = Logger(label: label)
        if let logLevel { logger.logLevel = logLevel }
        return logger
    }

    private func locked<T>(_ body: (inout Servers) -> T) -> T {
        lock.withLock { body(&servers) }
    }

    /// The data directory of the server named `name` ("cloud" or a gateway id).
    public func directory(_ name: String) -> String { "\(root)/\(name)" }

    /// The running cloud, if any.
    public var cloud: Cloud<ContinuousClock>? { locked { $0.cloud } }

    /// The bound port of the cloud (0 before its first start).
    public var cloudPort: Int { cloudRunner.port }

    /// `http://127.0.0.1:<cloud port>`.
    public var cloudURL: String { "http://127.0.0.1:\(cloudPort)" }

    /// Running gateway `id`, if any.
    public func gateway(_ id: String) -> Gateway? { locked { $0.gateways[id] } }

    /// The ids of the running gateways.
    public var gatewayIDs: [String] { locked { Array($0.gateways.keys) } }

    /// The bound port of gateway `id` (0 when it does not run).
    public func port(of id: String) -> Int {
        locked { $0.gateways[id] == nil ? nil : $0.runners[id] }?.port ?? 0
    }

    /// Starts (or restarts, on the same port) the cloud with the system's configuration;
    /// `extra` adds sections (`[limits]`, …) as written.
    public func startCloud(extra: String = "") async throws {
        try await startCloud(try config.cloud(dataDirectory: directory("cloud"), extra: extra))
    }

    /// Starts (or restarts, on the same port) the cloud with `config`, written by the caller
    /// (usually with this system's ``SystemConfig``).
    ///
    /// - Parameter now: the cloud's wall clock in ms since 1970 (upkeep ages data by it).
    public func startCloud(
        _ config: CloudConfig, now: @escaping @Sendable () -> Int64 = Cloud<ContinuousClock>.wallClock
    ) async throws {
        // The cloud comes back on its port while gateways retry it: outside the ephemeral
        // range, where no retry can take the port for itself (``FreePort``).
        let port = cloudRunner.port != 0 ? cloudRunner.port : try FreePort.outsideEphemeralRange()
        try await cloudRunner.start { report in
            let cloud = try Cloud(config: config, logger: serverLogger(), now: now)
            locked { $0.cloud = cloud }
            return cloud.services(port: port, onServerRunning: report)
        }
    }

    /// Stops the cloud and closes its store.
    public func stopCloud() async throws {
        try await cloudRunner.stop()
        let cloud = locked { servers in
            defer { servers.cloud = nil }
            return servers.cloud
        }
        try cloud?.store.close()
    }

    /// Starts `gateway` (made by the caller, with its configuration and clock) under `id`, on an
    /// ephemeral port, or on the port `id` had if it ran before and `samePort` is set.
    public func startGateway(_ id: String, _ gateway: Gateway, samePort: Bool = false) async throws {
        let runner = locked { servers in
            let runner =
                servers.runners[id] ?? ServiceRunner(label: label, gracefulShutdownLimit: gracefulShutdownLimit)
            servers.runners[id] = runner
            servers.gateways[id] = gateway
            return runner
        }
        let port = samePort ? runner.port : 0
        try await runner.start { report in gateway.services(port: port, onServerRunning: report) }
    }

    /// Starts a gateway for `config` on the system clock under `id`.
    public func startGateway(_ id: String, _ config: GatewayConfig) async throws {
        try await startGateway(id, try Gateway(config: config, logger: serverLogger()))
    }

    /// Stops gateway `id` and closes its replica; does nothing if it does not run.
    public func stopGateway(_ id: String) async throws {
        let (runner, gateway) = locked { servers in
            (servers.runners[id], servers.gateways.removeValue(forKey: id))
        }
        guard let gateway else { return }
        try await runner?.stop()
        try gateway.close()
    }

    /// Stops every gateway, then the cloud, and removes the data directories it made. With `cloudFirst`,
    /// the cloud stops first: its notify hub then answers the polls the gateways hold, so they
    /// stop without waiting a long `notify_wait` out. Reports the first error, after trying all.
    public func shutdown(cloudFirst: Bool = false) async throws {
        var failure: (any Error)?
        if cloudFirst, cloud != nil {
            do { try await stopCloud() } catch { failure = failure ?? error }
        }
        for id in gatewayIDs {
            do { try await stopGateway(id) } catch { failure = failure ?? error }
        }
        if cloud != nil {
            do { try await stopCloud() } catch { failure = failure ?? error }
        }
        if ownsRoot { try? FileManager.default.removeItem(atPath: root) }
        if let failure { throw failure }
    }
}
