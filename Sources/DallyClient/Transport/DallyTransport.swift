/// How ``DallyClient`` sends an HTTP request: the one seam between the library and an HTTP
/// stack.
///
/// The library ships ``HTTPClientTransport`` (AsyncHTTPClient, on Linux and Apple platforms).
/// Nothing of NIO appears in this protocol, so a transport over `URLSession` (an iOS app that
/// would rather not link NIO) is a type of a few dozen lines implementing ``send(_:)`` with
/// `URLSession.bytes(for:)` and ``shutdown()`` as nothing.
///
/// For example, a transport that counts requests around another one:
/// ```swift
/// struct Counting: DallyTransport {
///     let inner: any DallyTransport
///     let counter: Counter
///     func send(_ request: TransportRequest) async throws -> TransportResponse {
///         counter.increment()
///         return try await inner.send(request)
///     }
///     func shutdown() async throws { try await inner.shutdown() }
/// }
/// let client = DallyClient(url: url, token: token, transport: Counting(inner: HTTPClientTransport(), counter: c))
/// ```
public protocol DallyTransport: Sendable {
    /// Sends `request` and answers as soon as the status and headers have arrived; the body
    /// streams in ``TransportResponse/body``, which the caller reads to the end or drops.
    ///
    /// - Throws: ``DallyClientError/unreachable(_:)`` when no connection could be made or it
    ///   broke before an answer (the library retries long-polls on it); anything else is passed on.
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// Releases connections and threads; the transport is not used again.
    func shutdown() async throws
}

/// One HTTP request as the library makes it.
public struct TransportRequest: Sendable {
    /// `GET`, `PUT`, `PATCH`, `POST`, `DELETE` or `HEAD`.
    public var method: String
    /// The whole URL, query included.
    public var url: String
    /// Header names and values, in order.
    public var headers: [(name: String, value: String)]
    /// The body, if any.
    public var body: Body
    /// How long the whole exchange may take until the headers arrive (long-polls: their wait
    /// and a margin).
    public var timeout: Duration

    /// A request body: bytes in memory, or a stream with its length when known.
    public enum Body: Sendable {
        case none
        case bytes([UInt8])
        case stream(ByteStream, length: Int64?)
    }

    /// A request; `headers` are sent in order, after the library's own (`Authorization`, `Content-Type`).
    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: Body = .none, timeout: Duration) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}

/// An HTTP answer: status, headers, and the body as it streams in.
public struct TransportResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header names and values as received.
    public var headers: [(name: String, value: String)]
    /// The body, read once, as it arrives.
    public var body: ByteStream

    /// An answer a transport hands back.
    public init(status: Int, headers: [(name: String, value: String)], body: ByteStream) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (any case), if present.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
