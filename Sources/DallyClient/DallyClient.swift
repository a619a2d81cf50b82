import DallyCore

/// A connection to one Dally gateway: tables, the changes feed, objects, sync, conflicts and,
/// with the admin token, stats and uplinks.
///
/// A value type and `Sendable`: share it between tasks freely. It keeps connections open
/// through its ``DallyTransport``; call ``shutdown()`` once, when the app is done with it.
///
/// For example:
/// ```swift
/// import DallyClient
///
/// struct Order: Codable, Sendable { var customer: String; var total: Double }
///
/// let client = DallyClient(url: "http://127.0.0.1:8080", token: "dev-client-token-change-me")
/// let orders = client.table("orders", as: Order.self)
/// let row = try await orders.put(id: "o1", Order(customer: "Ada", total: 12.5))
/// print(row.seq)
/// try await client.shutdown()
/// ```
public struct DallyClient: Sendable {
    /// The gateway's base URL, e.g. `http://127.0.0.1:8080` (no trailing slash).
    public let url: String
    /// The bearer token sent with every request (nil: none, for `/healthz`).
    public let token: String?
    /// How requests travel.
    public let transport: any DallyTransport
    /// How long a request other than a long-poll or an object transfer may take.
    public var requestTimeout: Duration = .seconds(60)
    /// How long an object upload or download may take, start to end.
    public var transferTimeout: Duration = .seconds(3600)

    /// A client of the gateway at `url` with bearer `token`, over AsyncHTTPClient unless
    /// another `transport` is given.
    ///
    /// For example: `DallyClient(url: "http://127.0.0.1:8080", token: ProcessInfo.processInfo.environment["DALLY_TOKEN"])`.
    public init(url: String, token: String?, transport: any DallyTransport = HTTPClientTransport()) {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        self.url = base
        self.token = token
        self.transport = transport
    }

    /// Closes the transport's connections. Call it once, after the last request.
    public func shutdown() async throws {
        try await transport.shutdown()
    }

    /// A handle on table `name` whose rows read and write as `Values` (any `Codable` type keyed
    /// by column name; `JSONValue` for any table). Making one sends nothing.
    ///
    /// For example: `let orders = client.table("orders", as: Order.self)`.
    public func table<Values: Codable & Sendable>(_ name: String, as type: Values.Type = JSONValue.self) -> Table<Values> {
        Table(client: self, name: name)
    }

    /// True when the gateway answers `GET /healthz` (no token needed).
    ///
    /// For example: `guard await client.isHealthy() else { … }`.
    public func isHealthy() async -> Bool {
        guard let response = try? await send("GET", Endpoint("healthz")) else { return false }
        _ = try? await response.body.collect(upTo: 4096)
        return response.status == 200
    }

    // MARK: - Requests

    /// Sends a request; an answer with an error status is thrown as ``DallyClientError``.
    func send(
        _ method: String, _ endpoint: Endpoint, headers: [(name: String, value: String)] = [],
        body: TransportRequest.Body = .none, timeout: Duration? = nil
    ) async throws -> TransportResponse {
        var all = headers
        if let token { all.append((name: "Authorization", value: "Bearer \(token)")) }
        if case .bytes = body { all.append((name: "Content-Type", value: "application/json")) }
        let request = TransportRequest(
            method: method, url: endpoint.url(base: url), headers: all, body: body, timeout: timeout ?? requestTimeout)
        let response = try await transport.send(request)
        guard response.status < 400 else {
            let bytes = (try? await response.body.collect(upTo: 1 << 20)) ?? []
            throw ErrorAnswer.error(status: response.status, body: bytes, retryAfter: response.header("Retry-After"))
        }
        return response
    }

    /// Sends a request with a JSON body and decodes its JSON answer as `T`.
    func call<T: Decodable>(
        _ method: String, _ endpoint: Endpoint, json: some Encodable, headers: [(name: String, value: String)] = [],
        timeout: Duration? = nil, as type: T.Type
    ) async throws -> T {
        try await call(method, endpoint, body: .bytes(try JSONCoding.encode(json)), headers: headers, timeout: timeout, as: type)
    }

    /// Sends a request without a body (or with `body`) and decodes its JSON answer as `T`.
    func call<T: Decodable>(
        _ method: String, _ endpoint: Endpoint, body: TransportRequest.Body = .none,
        headers: [(name: String, value: String)] = [], timeout: Duration? = nil, as type: T.Type
    ) async throws -> T {
        let response = try await send(method, endpoint, headers: headers, body: body, timeout: timeout)
        let bytes = try await response.body.collect(upTo: Self.maximumDocumentBytes)
        return try JSONCoding.decode(type, from: bytes, what: "\(method) /\(endpoint.segments.joined(separator: "/"))")
    }

    /// The largest JSON answer read into memory (a page of rows, stats): far above any
    /// gateway limit, a guard against a wrong URL that streams something else.
    static let maximumDocumentBytes = 256 << 20
}
