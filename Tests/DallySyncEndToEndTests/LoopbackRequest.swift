import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// One request, with a bearer token, to a server that a process test started itself on
/// loopback (``GatewayProcess``, or a `SpawnedProcess` of its own).
///
/// ```swift
/// let reply = try await LoopbackRequest.send(port, .GET, "/healthz", token: "client-token-0123456789")
/// ```
enum LoopbackRequest {
    static func send(
        _ port: Int, _ method: HTTPMethod, _ path: String, _ body: String? = nil, token: String,
        client: HTTPClient = .shared, timeout: TimeAmount = .seconds(30)
    ) async throws -> SyncSystem.Reply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: timeout)
        return SyncSystem.Reply(
            status: Int(response.status.code), headers: response.headers,
            body: String(buffer: try await response.body.collect(upTo: 4 << 20)))
    }
}
