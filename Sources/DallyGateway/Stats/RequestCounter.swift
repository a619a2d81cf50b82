import Hummingbird
import Prometheus
import Synchronization

/// Counts requests by route, method and status, for `/stats` and for Prometheus.
final class RequestCounter: Sendable {
    struct Key: Hashable, Sendable {
        let route: String
        let method: String
        let status: Int
    }

    private let counts = Mutex<[Key: Int64]>([:])
    private let registry: PrometheusCollectorRegistry

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func record(route: String, method: String, status: Int) {
        counts.withLock { $0[Key(route: route, method: method, status: status), default: 0] += 1 }
        registry.makeCounter(
            name: "dally_http_requests_total",
            labels: [("route", route), ("method", method), ("status", String(status))]
        ).increment()
    }

    var snapshot: [Key: Int64] { counts.withLock { $0 } }
}

/// Records every request's route pattern (not its path, so ids do not explode the label set),
/// method and final status, errors included.
struct RequestCountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let counter: RequestCounter

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        counter.record(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code)
        return response
    }
}
