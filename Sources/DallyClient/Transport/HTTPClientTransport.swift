import AsyncHTTPClient
import DallyHTTPClientErrors
import NIOCore
import NIOHTTP1
import NIOSSL

/// The transport ``DallyClient`` uses unless given another: AsyncHTTPClient on NIO's shared
/// event loops. Call ``shutdown()`` (or ``DallyClient/shutdown()``) once done with it.
///
/// For example:
/// ```swift
/// let transport = HTTPClientTransport(maximumConnections: 16)
/// let client = DallyClient(url: "http://127.0.0.1:8080", token: token, transport: transport)
/// defer { Task { try await client.shutdown() } }
/// ```
public final class HTTPClientTransport: DallyTransport {
    private let http: HTTPClient

    /// A transport keeping up to `maximumConnections` connections to the gateway: each held
    /// long-poll (a ``ChangeFeed``) occupies one while it waits. A connection that cannot be
    /// made within `connectTimeout` is ``DallyClientError/unreachable(_:)``.
    public convenience init(maximumConnections: Int = 32, connectTimeout: Duration = .seconds(10)) {
        self.init(maximumConnections: maximumConnections, connectTimeout: connectTimeout, tls: nil)
    }

    /// A transport to a gateway whose `https` certificate a private CA signed (`[server]
    /// tls_cert`, docs/OPERATIONS.md): `certificateAuthority` is that CA's PEM file, trusted
    /// instead of the system's roots.
    ///
    /// ```swift
    /// let transport = try HTTPClientTransport(certificateAuthority: "/etc/dally/ca.pem")
    /// let client = DallyClient(url: "https://gateway.shop.internal:8443", token: token, transport: transport)
    /// ```
    ///
    /// - Throws: ``DallyClientError/fileError(_:)`` when the file cannot be read as PEM certificates.
    public convenience init(
        certificateAuthority: String, maximumConnections: Int = 32, connectTimeout: Duration = .seconds(10)
    ) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        do {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificateAuthority))
        } catch {
            throw DallyClientError.fileError("cannot read the CA certificate \(certificateAuthority): \(error)")
        }
        self.init(maximumConnections: maximumConnections, connectTimeout: connectTimeout, tls: tls)
    }

    private init(maximumConnections: Int, connectTimeout: Duration, tls: TLSConfiguration?) {
        var configuration = HTTPClient.Configuration()
        if let tls { configuration.tlsConfiguration = tls }
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = maximumConnections
        configuration.timeout.connect = .nanoseconds(Self.nanoseconds(connectTimeout))
        // A refused connection is answered at once (after one more try, ``RefusedConnection``),
        // not retried until the timeout: the caller (a ChangeFeed with its backoff, a person at
        // a prompt) decides what to do next.
        configuration.connectionPool.retryConnectionEstablishment = false
        // Objects are sent and received as they are; rows are small. No decompression.
        configuration.decompression = .disabled
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        switch request.body {
        case .none: break
        case .bytes(let bytes): outgoing.body = .bytes(ByteBuffer(bytes: bytes))
        case .stream(let stream, let length):
            let buffers = stream.map { ByteBuffer(bytes: $0) }
            outgoing.body = .stream(buffers, length: length.map { .known($0) } ?? .unknown)
        }
        let response: HTTPClientResponse
        let timeout = TimeAmount.nanoseconds(Self.nanoseconds(request.timeout))
        do {
            // A streamed body may have been read in part: only a body that can go again whole
            // is tried again after a refusal that may have been another request's.
            if case .stream = request.body {
                response = try await http.execute(outgoing, timeout: timeout)
            } else {
                response = try await RefusedConnection.retrying { try await http.execute(outgoing, timeout: timeout) }
            }
        } catch let error as DallyClientError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw DallyClientError.unreachable("\(request.method) \(request.url): \(TransportFailure.describe(error))")
        }
        let body = response.body
        let url = request.url
        let stream = ByteStream {
            let box = BufferIteratorBox(body.makeAsyncIterator())
            return {
                do {
                    return try await box.next().map { Array(buffer: $0) }
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    throw DallyClientError.unreachable("reading the answer of \(url): \(TransportFailure.describe(error))")
                }
            }
        }
        return TransportResponse(
            status: Int(response.status.code), headers: response.headers.map { (name: $0.name, value: $0.value) },
            body: stream)
    }

    public func shutdown() async throws {
        try await http.shutdown()
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Holds a response body's iterator for the one reader of a ``ByteStream``.
private final class BufferIteratorBox: @unchecked Sendable {
    private var base: HTTPClientResponse.Body.AsyncIterator

    init(_ base: HTTPClientResponse.Body.AsyncIterator) { self.base = base }

    func next() async throws -> ByteBuffer? { try await base.next() }
}
