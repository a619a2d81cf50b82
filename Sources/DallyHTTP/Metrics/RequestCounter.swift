import DallyCore
import Hummingbird
import Prometheus
import Synchronization

/// Counts requests by route, method and status, for `/stats` and for Prometheus.
public final class RequestCounter: Sendable {
    public struct Key: Hashable, Sendable {
        public let route: String
        public let method: String
        public let status: Int
    }

    private let counts = Mutex<[Key: Int64]>([:])
    private let registry: PrometheusCollectorRegistry

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    public func record(route: String, method: String, status: Int) {
        counts.withLock { $0[Key(route: route, method: method, status: status), default: 0] += 1 }
        registry.counter(
            "dally_http_requests_total", help: "HTTP requests answered, by route pattern, method and status.",
            labels: [("route", route), ("method", method), ("status", String(status))]
        ).increment()
    }

    public var snapshot: [Key: Int64] { counts.withLock { $0 } }

    /// Writes `[{"route","method","status","count"}…]`, sorted, for `/stats`.
    /// Every count, by route, method and status, for `/stats`.
    public var entries: [RequestCount] {
        snapshot.map { RequestCount(route: $0.key.route, method: $0.key.method, status: $0.key.status, count: $0.value) }
            .sorted { ($0.route, $0.method, $0.status) < ($1.route, $1.method, $1.status) }
    }
}

/// Requests answered for one route, method and status: `{"route":…,"method":…,"status":…,"count":…}`.
public struct RequestCount: Encodable, Sendable {
    public let route: String
    public let method: String
    public let status: Int
    public let count: Int64
}

/// Counts every answered request by route pattern, method and status (``RequestCounter``),
/// and logs it at debug level with its duration.
public struct RequestCountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let counter: RequestCounter

    public init(counter: RequestCounter) { self.counter = counter }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let route = context.endpointPath ?? "unmatched"
        counter.record(route: route, method: request.method.rawValue, status: response.status.code)
        context.logger.debug(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(response.status.code)",
                "duration_ms": "\(Self.milliseconds(ContinuousClock.now - start))",
            ])
        return response
    }

    /// `duration` in milliseconds, to the hundredth.
    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return ((Double(seconds) * 1000 + Double(attoseconds) / 1e15) * 100).rounded() / 100
    }
}
