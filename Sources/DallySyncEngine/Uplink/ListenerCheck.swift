import Foundation
import NIOCore
import NIOPosix

/// Whether anything accepts a TCP connection at a node's host and port: the first question of
/// a probe while the cloud is away.
///
/// On a LAN a cloud that is down refuses the connection, and a bare connect learns that without
/// AsyncHTTPClient's pool, request and failure: a probe of a gateway whose cloud is down cost
/// 0.33–0.58 ms of CPU against 0.67–0.87 (the rest is the probe loop's wake-ups across threads;
/// docs/BENCHMARKS.md). Only a node that accepts is then asked `GET /healthz`, which says
/// whether it serves.
///
/// ```swift
/// let check = ListenerCheck(url: "http://127.0.0.1:8090")
/// if await check?.accepts(timeout: .seconds(1)) == false { /* still down */ }
/// ```
struct ListenerCheck: Sendable {
    let host: String
    let port: Int
    /// The socket address when `host` is an IP address: connected to directly, without the
    /// resolver's round through a thread of its own.
    let address: SocketAddress?

    /// The check for a node's base URL; nil when the URL names no host (it is then left to the
    /// HTTP request to fail with its own error).
    init?(url: String) {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return nil }
        let scheme = components.scheme?.lowercased()
        guard let port = components.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) else { return nil }
        // `URLComponents` keeps an IPv6 literal's brackets; the socket address has none.
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.port = port
        address = try? SocketAddress(ipAddress: self.host, port: port)
    }

    /// Whether a connection to the node is accepted within `timeout` (closed at once).
    func accepts(timeout: Duration) async -> Bool {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.milliseconds(max(1, timeout.milliseconds)))
        do {
            let connecting = address.map { bootstrap.connect(to: $0) } ?? bootstrap.connect(host: host, port: port)
            let channel = try await connecting.get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }
}
