import AsyncHTTPClient
import Foundation
import NIOCore

/// What a person reads when a request failed below HTTP: a gateway's operator in the uplink's
/// `last_error` in `/stats` and in the "sync failed; retrying" warning, a user of `dally client`
/// in "gateway unreachable: …".
///
/// The transport's own texts are written for its developers: a refused connection read
/// `connection reset (error set): Connection refused) (errno: 111)` (NIO's socket-option
/// reason around the system's text), a timeout `HTTPClientError.connectTimeout`. This names
/// what happened in the system's words, with the errno for a search.
///
/// ```swift
/// TransportFailure.describe(IOError(errnoCode: ECONNREFUSED, reason: "connect"))
/// // "connection refused (errno 111)"
/// ```
public enum TransportFailure {
    public static func describe(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            let text = String(cString: strerror(error.errnoCode))
            return "\(text.prefix(1).lowercased())\(text.dropFirst()) (errno \(error.errnoCode))"
        case let error as HTTPClientError:
            let text = error.shortDescription
            return "\(text.prefix(1).lowercased())\(text.dropFirst())"
        case ChannelError.connectTimeout(let limit):
            return "connect timeout (\(limit.nanoseconds / 1_000_000) ms)"
        default:
            return String(describing: error)
        }
    }
}
