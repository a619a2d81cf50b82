import AsyncHTTPClient
import NIOCore

/// What puts one request on a connection to the cloud and hands back its answer's head: the
/// uplink's `HTTPClient`, whose pool picks the connection.
///
/// A seam for ``TransferWatch``: a test stands in a sender that fails as a real pool does when
/// it hands out a connection the peer closed a moment before (``StaleConnection``), a race no
/// real server can be made to lose on cue.
///
/// ```swift
/// let response = try await http.send(request)   // `http` an `HTTPClient`
/// ```
protocol RequestSender: Sendable {
    /// Sends `request` and returns the answer's head; its body streams from the response.
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse
}

extension HTTPClient: RequestSender {
    /// No deadline of the client's own: the ``TransferWatch`` judges the request by its progress.
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        try await execute(request, deadline: .distantFuture)
    }
}
