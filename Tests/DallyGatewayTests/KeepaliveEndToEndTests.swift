import DallyConfig
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `[server] keepalive_timeout`: a connection with no request under way is closed after it;
/// a request under way (a long-poll) is not cut by it.
@Suite("End to end: keep-alive timeout")
struct KeepaliveEndToEndTests {
    static func config() throws -> GatewayConfig {
        var config = try LiveGateway.config()
        config.server.keepaliveTimeout = .seconds(1)
        return config
    }

    @Test(arguments: ["", "GET /healthz HTTP/1.1\r\nHo"])
    func aConnectionWithNoRequestUnderWayIsClosed(_ sent: String) async throws {
        try await LiveGateway.run(try Self.config()) { gw in
            let (closed, received) = await Self.sendThenWaitForClose(port: gw.port, sent)
            #expect(closed, "the connection stayed open (received: \(received))")
            #expect(received.isEmpty)
        }
    }

    @Test func aLongPollOutlastsTheTimeout() async throws {
        try await LiveGateway.run(try Self.config()) { gw in
            let poll = try await gw.send(.GET, "/v1/tables/orders/changes?since=0&wait=3")
            #expect(poll.status == 200, "\(poll.body)")
            #expect(poll.json["changes"]?.array?.isEmpty == true)
        }
    }

    /// Connects, sends `text`, and reads until the server closes the connection (true) or 30 s
    /// pass (false); what was received. On a thread of its own: blocking calls must not hold
    /// the threads the server's tasks run on.
    static func sendThenWaitForClose(port: Int, _ text: String) async -> (closed: Bool, received: String) {
        await withCheckedContinuation { continuation in
            Thread {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(fd) }
                var limit = timeval(tv_sec: 30, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(port).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                let bytes = Array(text.utf8)
                _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                var received = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n > 0 {
                        received += buffer[0..<n]
                        continue
                    }
                    continuation.resume(returning: (n == 0, String(decoding: received, as: UTF8.self)))
                    return
                }
            }.start()
        }
    }
}
