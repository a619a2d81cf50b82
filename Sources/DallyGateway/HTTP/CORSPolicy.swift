import HTTPTypes
import Hummingbird

/// Lets the pages of the configured web origins call the local API from a browser (CORS,
/// `[server] cors_origins`): a till or a dashboard served from its own origin reads and writes
/// rows, follows the changes feed and moves objects with `fetch`, its bearer token in
/// `Authorization`.
///
/// A preflight (`OPTIONS` with `Access-Control-Request-Method`) from an allowed origin is
/// answered `204` here, before the routes (none takes `OPTIONS`): the methods and request
/// headers the API reads, cached by the browser for ten minutes. Every other answer to an
/// allowed origin, errors included (a page must read them), names the origin and exposes the
/// headers a client reads beside the body (`ETag` for `If-Match`, `Retry-After`, the range
/// headers of object downloads). A request from another origin, or without one, gets no CORS
/// header: the browser keeps it from the page, and other clients see no change. Hummingbird's
/// `CORSMiddleware` takes its list of origins only as variadic arguments, not from a file.
///
/// ```swift
/// router.middlewares.add(CORSPolicy<DallyRequestContext>(origins: ["https://pos.example"]))
/// ```
struct CORSPolicy<Context: RequestContext>: RouterMiddleware {
    let origins: Set<String>
    /// `cors_origins = ["*"]`: any origin, answered `*` (the token travels in a header, not a
    /// cookie, so no credentials mode is needed).
    let anyOrigin: Bool

    static var methods: String { "GET, HEAD, POST, PUT, PATCH, DELETE" }
    static var requestHeaders: String { "Authorization, Content-Type, Content-Encoding, If-Match, If-None-Match, Range" }
    static var exposedHeaders: String { "ETag, Retry-After, Content-Range, Accept-Ranges" }
    static var maxAgeSeconds: String { "600" }
    static var requestPrivateNetwork: HTTPField.Name? { HTTPField.Name("Access-Control-Request-Private-Network") }
    static var allowPrivateNetwork: HTTPField.Name? { HTTPField.Name("Access-Control-Allow-Private-Network") }

    init(origins: [String]) {
        anyOrigin = origins == ["*"]
        self.origins = Set(origins)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], anyOrigin || origins.contains(origin) else {
            return try await next(request, context)
        }
        let allowed = anyOrigin ? "*" : origin
        if request.method == .options, request.headers[.accessControlRequestMethod] != nil {
            var headers: HTTPFields = [
                .accessControlAllowOrigin: allowed,
                .accessControlAllowMethods: Self.methods,
                .accessControlAllowHeaders: Self.requestHeaders,
                .accessControlMaxAge: Self.maxAgeSeconds,
            ]
            if !anyOrigin { headers[.vary] = "Origin" }
            // Chrome asks before a page from the internet reaches a private address, as a
            // gateway on the shop's LAN is (Private Network Access): the operator allowed the
            // origin, so it may.
            if let asked = Self.requestPrivateNetwork, let allow = Self.allowPrivateNetwork, request.headers[asked] == "true" {
                headers[allow] = "true"
            }
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers[.accessControlAllowOrigin] = allowed
        response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
        if !anyOrigin { response.headers.append(HTTPField(name: .vary, value: "Origin")) }
        return response
    }
}
