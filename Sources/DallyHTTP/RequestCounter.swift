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
    public func write(to writer: inout JSONWriter) {
        let entries = snapshot.sorted {
            ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status)
        }
        writer.raw("[")
        for (i, entry) in entries.enumerated() {
            if i > 0 { writer.raw(",") }
            writer.raw("{\"route\":")
            writer.string(entry.key.route)
            writer.raw(",\"method\":")
            writer.string(entry.key.method)
            writer.raw(",\"status\":")
            writer.int(Int64(entry.key.status))
            writer.raw(",\"count\":")
            writer.int(entry.value)
            writer.raw("}")
        }
        writer.raw("]")
    }
}

/// Records every request's route pattern (not its path, so ids do not explode the label set),
/// method and final status, errors included.
public struct RequestCountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let counter: RequestCounter

    public init(counter: RequestCounter) { self.counter = counter }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        counter.record(
            route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code)
        return response
    }
}
