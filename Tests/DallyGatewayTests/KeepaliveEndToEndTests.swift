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

    /// `[server] body_timeout`: a body that stops coming is answered `408 body_timeout` in JSON
    /// and its connection closed, nothing written; one that keeps coming, however slowly, is not
    /// cut.
    @Test func aBodyThatStopsComingIsAnswered408AndOneThatKeepsComingIsNot() async throws {
        var config = try LiveGateway.config()
        config.server.bodyTimeout = .seconds(2)
        try await LiveGateway.run(config) { gw in
            let head =
                "PUT /v1/tables/orders/rows/o1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(LiveGateway.clientToken)\r\n"
                + "Content-Type: application/json\r\nContent-Length: 29\r\n\r\n"
            let (closed, received) = await Self.sendThenWaitForClose(port: gw.port, head + #"{"values":{"#)
            #expect(closed)
            #expect(received.hasPrefix("HTTP/1.1 408 Request Timeout"), "\(received)")
            #expect(received.contains(#""code":"body_timeout""#), "\(received)")
            let stats = try await gw.stats()
            #expect(stats["store"]?["last_seq"]?.int == 0)

            // The same 29 bytes, a few at a time, a quarter of a second apart.
            let body = Array(#"{"values":{"customer":"Ada"}}"#)
            let pieces = stride(from: 0, to: body.count, by: 4).map { String(body[$0..<min($0 + 4, body.count)]) }
            let answer = await Self.sendSlowly(port: gw.port, [head] + pieces, pause: 0.25)
            #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer)")
            let saved = try await gw.send(.GET, "/v1/tables/orders/rows/o1")
            #expect(saved.status == 200)
        }
    }

    /// Sends `pieces` one after another, `pause` seconds apart, then reads the answer (it is
    /// whole once its body's closing brace came).
    static func sendSlowly(port: Int, _ pieces: [String], pause: Double) async -> String {
        await withCheckedContinuation { continuation in
            Thread {
                let connection = RawConnection(port: port, receiveTimeout: 30)
                defer { connection.close() }
                for (index, piece) in pieces.enumerated() {
                    if index > 0 { Thread.sleep(forTimeInterval: pause) }
                    connection.send(piece)
                }
                var received: [UInt8] = []
                while received.last != UInt8(ascii: "}"), case .bytes(let bytes) = connection.receive() {
                    received += bytes
                }
                continuation.resume(returning: String(decoding: received, as: UTF8.self))
            }.start()
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
