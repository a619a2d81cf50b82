import DallyHTTPClientErrors
import NIOCore

/// A request that failed on a pooled connection its peer had already closed, before any of it
/// went: safe and free to send again on a fresh one.
///
/// A cut (the link dropped, a relay or proxy restarted) closes every connection of the uplink,
/// and the pool learns of each close only when its event loop gets to it. A request given one
/// of those connections meanwhile fails at once with `I/O on closed channel`, before its head
/// is written (AsyncHTTPClient's `HTTP1Connection.execute0`). Nothing of it crossed the link,
/// so it is no failure of the link: counted as one, it spent the cut's retry at once and
/// left the uplink in a backoff of up to `retry_max` after a link that was back.
///
/// A request that had handed body bytes to the connection is a real cut, whatever the error
/// says: it is left to fail, so that a resumable body resumes where the cloud's copy ends
/// instead of going again from its first byte.
enum StaleConnection {
    /// Fresh connections tried after a stale one, per request: the pool holds at most four
    /// connections to a node (``Uplink``), and a cut may have closed all of them.
    static let retries = 4

    /// Whether `error`, for a request that had handed `handed` body bytes to its connection,
    /// means the connection was closed before the request went.
    static func isStale(_ error: any Error, handed: Int) -> Bool {
        guard handed == 0, let channel = error as? ChannelError else { return false }
        return channel == .ioOnClosedChannel
    }

    /// Runs `attempt`, the sending of a request without a body (a probe, a notify stream), and
    /// runs it again while it fails on a connection closed before it went, ``retries`` times
    /// at most; `stale` is told of each. Without this, such a request after a cut told the
    /// uplink the cloud was silent, and the probe's interval passed before it was asked again.
    /// A refused connection goes once more too (``RefusedConnection``): the refusal may have
    /// been another attempt's, begun while the cloud was down, and a notify stream failed so
    /// waited out its backoff (up to `retry_max`) with the cloud back.
    ///
    /// ```swift
    /// let response = try await StaleConnection.retrying({ try await http.execute(request, timeout: timeout) },
    ///                                                   stale: model.staleConnection)
    /// ```
    static func retrying<T>(_ attempt: () async throws -> T, stale: () -> Void) async throws -> T {
        var (tries, refused) = (0, 0)
        while true {
            do {
                return try await attempt()
            } catch where tries < retries && isStale(error, handed: 0) {
                tries += 1
                stale()
            } catch where refused < RefusedConnection.retries && RefusedConnection.isRefused(error, handed: 0) {
                refused += 1
            }
        }
    }
}
