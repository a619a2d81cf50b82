import DallyConfig
import Foundation
import Testing

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
    /// - Parameter halfClose: closes the sending half after `text` (a client that stops there).
    static func sendThenWaitForClose(port: Int, _ text: String, halfClose: Bool = false) async
        -> (closed: Bool, received: String)
    {
        await withCheckedContinuation { continuation in
            Thread {
                let connection = RawConnection(port: port, receiveTimeout: 30)
                defer { connection.close() }
                connection.send(text)
                if halfClose { connection.finishSending() }
                let (closed, received) = connection.receiveUntilClosed()
                continuation.resume(returning: (closed, received))
            }.start()
        }
    }

    /// Two HTTP/1.0 requests with `Connection: keep-alive`, the second sent once the first is
    /// answered, on one connection: what came back for each.
    static func twoHTTP10KeepAliveRequests(port: Int) async -> (first: String, second: String) {
        await withCheckedContinuation { continuation in
            Thread {
                let connection = RawConnection(port: port, receiveTimeout: 30)
                defer { connection.close() }
                func exchange() -> String {
                    connection.send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                    var received: [UInt8] = []
                    // The answer is small: it is whole once its body's closing brace came.
                    while received.last != UInt8(ascii: "}"), case .bytes(let bytes) = connection.receive() {
                        received += bytes
                    }
                    return String(decoding: received, as: UTF8.self)
                }
                let first = exchange()
                continuation.resume(returning: (first, exchange()))
            }.start()
        }
    }
}
