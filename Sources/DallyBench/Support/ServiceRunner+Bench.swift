import DallyTestSupport
import ServiceLifecycle

extension ServiceRunner {
    /// How long a benchmark's services may take to stop before they are cancelled: a service
    /// that ignores the shutdown request (a long-poll it cannot cut short) must not keep the
    /// process from exiting.
    static let benchShutdownLimit: Duration = .seconds(15)

    /// A runner already running the services `make` returns, once `servers` servers listen,
    /// logging as `dally.bench` and bounded by ``benchShutdownLimit``.
    static func bench(
        servers: Int, _ make: (@escaping @Sendable (Int, Int) async -> Void) throws -> [any Service]
    ) async throws -> ServiceRunner {
        try await started(servers: servers, label: "dally.bench", gracefulShutdownLimit: benchShutdownLimit, make)
    }
}
