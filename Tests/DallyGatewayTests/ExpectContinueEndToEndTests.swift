import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

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
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(fd) }
                var limit = timeval(tv_sec: 10, tv_usec: 0)
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
                func write(_ text: String) {
                    let bytes = Array(text.utf8)
                    _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
                func read(untilClosed: Bool) -> String {
                    var text = ""
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    repeat {
                        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                        if n <= 0 { break }
                        text += String(decoding: buffer[0..<n], as: UTF8.self)
                    } while untilClosed
                    return text
                }
                write(head)
                let before = read(untilClosed: false)
                write(body)
                let after = read(untilClosed: true)
                continuation.resume(returning: (before, after))
            }.start()
        }
    }
}
