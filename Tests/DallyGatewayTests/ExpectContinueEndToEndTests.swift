import Foundation
import Testing

/// `Expect: 100-continue` is answered at once, so curl does not wait a second before a body.
@Suite("End to end: Expect 100-continue")
struct ExpectContinueEndToEndTests {
    @Test func theHeadAloneIsAnswered100ContinueThenTheRequestGoesOn() async throws {
        try await LiveGateway.run(try LiveGateway.config()) { gateway in
            let body = #"{"values":{"customer":"Ada"}}"#
            let answers = await Self.exchange(
                port: gateway.port,
                head: "PUT /v1/tables/orders/rows/o1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Authorization: Bearer \(LiveGateway.clientToken)\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.utf8.count)\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
                body: body)
            #expect(answers.beforeBody.hasPrefix("HTTP/1.1 100 Continue"))
            #expect(answers.afterBody.contains("HTTP/1.1 200") && answers.afterBody.contains("\"o1\""))
        }
    }

    /// Sends `head`, reads what arrives before the body is sent (the receive times out after
    /// 10 s, so a server that does not answer shows as an empty string), then sends `body` and
    /// reads to the end. On a thread of its own: blocking calls must not hold the threads the
    /// server's tasks run on.
    static func exchange(port: Int, head: String, body: String) async -> (beforeBody: String, afterBody: String) {
        await withCheckedContinuation { continuation in
            Thread {
                let connection = RawConnection(port: port, receiveTimeout: 10)
                defer { connection.close() }
                connection.send(head)
                var before = ""
                if case .bytes(let bytes) = connection.receive() { before = String(decoding: bytes, as: UTF8.self) }
                connection.send(body)
                continuation.resume(returning: (before, connection.receiveUntilClosed().text))
            }.start()
        }
    }
}
