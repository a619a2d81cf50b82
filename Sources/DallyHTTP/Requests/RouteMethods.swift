import Hummingbird
import Synchronization

/// The methods each route of a router answers, so that a request for a route that exists with
/// another method is told `405 method_not_allowed` and what it takes (`Allow`), not that no
/// such route exists: Hummingbird's router answers both `404`.
///
/// Learnt once every route is registered; the ``ErrorMiddleware`` (added before the routes,
/// as middleware must be) asks it.
///
/// ```swift
/// let methods = RouteMethods()
/// router.middlewares.add(ErrorMiddleware(bodyLimit: limit, routes: methods))
/// // … routes …
/// methods.learn(router.routes.map { ($0.path, $0.method) })
/// ```
public final class RouteMethods: Sendable {
    private struct Route {
        let components: [RouterPath.Element]
        var methods: Set<HTTPRequest.Method>
    }

    private let routes = Mutex<[Route]>([])

    public init() {}

    /// Records `routes` (a router's `routes`: each path with one method).
    public func learn(_ routes: [(path: RouterPath, method: HTTPRequest.Method)]) {
        var learnt: [Route] = []
        for (path, method) in routes {
            let components = Array(path.components)
            if let index = learnt.firstIndex(where: { $0.components == components }) {
                learnt[index].methods.insert(method)
            } else {
                learnt.append(Route(components: components, methods: [method]))
            }
        }
        // Hummingbird answers HEAD wherever GET is registered, without listing it.
        for index in learnt.indices where learnt[index].methods.contains(.get) { learnt[index].methods.insert(.head) }
        self.routes.withLock { $0 = learnt }
    }

    /// The methods the routes matching `path` answer, sorted; empty when none matches.
    public func allowed(for path: String) -> [HTTPRequest.Method] {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        let methods = routes.withLock { routes in
            routes.filter { Self.matches($0.components, parts) }.reduce(into: Set<HTTPRequest.Method>()) {
                $0.formUnion($1.methods)
            }
        }
        return methods.sorted { $0.rawValue < $1.rawValue }
    }

    private static func matches(_ components: [RouterPath.Element], _ parts: [Substring]) -> Bool {
        for (index, component) in components.enumerated() {
            if component == .recursiveWildcard { return true }
            guard index < parts.count, component ~= parts[index] else { return false }
        }
        return components.count == parts.count
    }
}
