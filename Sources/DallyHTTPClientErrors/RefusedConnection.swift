import Foundation
import NIOCore
import NIOPosix

/// A request that failed on a refused connection before any of it went: sent once more at
/// once, since the refusal may not have been its own.
///
/// AsyncHTTPClient's pool fails every request waiting for a connection when one connection
/// attempt fails (with `retryConnectionEstablishment` off, as ``Uplink`` sets it), and a new
/// request waits for a connection already starting rather than open its own. An attempt begun
/// while the cloud was down (the notify loop's, a wake's before it) is refused after the cloud
/// came back, and takes with it the request a sync-now made for the cloud that is back: the
/// likely cause of a sync-now a CI run saw answered `queued` a moment after the cloud was up,
/// its batch left in flight for the backoff. The second try opens a connection of its
/// own; when the cloud is really down it is refused as well, and the failure stands (one more
/// connection attempt, no byte of a body, per failed request). The sync engine's
/// `TransferWatch` tries a wake's requests so, and `StaleConnection.retrying` a probe and a
/// notify stream; the client library its requests whose body can be sent again (a change feed's
/// long-poll begun while a gateway restarted would otherwise fail the write made just after).
public enum RefusedConnection {
    /// Tries after a refusal, per request.
    public static let retries = 1

    /// Whether `error`, for a request that had handed `handed` body bytes to its connection,
    /// is a connection refused before the request went.
    ///
    /// ```swift
    /// RefusedConnection.isRefused(IOError(errnoCode: ECONNREFUSED, reason: "connect"), handed: 0)  // true
    /// ```
    public static func isRefused(_ error: any Error, handed: Int = 0) -> Bool {
        guard handed == 0 else { return false }
        switch error {
        case let error as IOError:
            return error.errnoCode == ECONNREFUSED
        case let error as NIOConnectionError:
            // A host name resolved to several addresses: refused on every one.
            return !error.connectionErrors.isEmpty
                && error.connectionErrors.allSatisfy { isRefused($0.error, handed: 0) }
        default:
            return false
        }
    }

    /// Runs `attempt`, and once more at once when its connection was refused before anything
    /// of it went; the second refusal is thrown.
    ///
    /// ```swift
    /// let response = try await RefusedConnection.retrying { try await http.execute(request, timeout: .seconds(30)) }
    /// ```
    public static func retrying<T>(_ attempt: () async throws -> T) async throws -> T {
        var refused = 0
        while true {
            do {
                return try await attempt()
            } catch where refused < retries && isRefused(error) {
                refused += 1
            }
        }
    }
}
