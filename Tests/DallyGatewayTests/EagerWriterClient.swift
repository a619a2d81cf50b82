import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A client that writes its whole request before reading anything and asks to close the
/// connection after the answer, as Python's urllib does: what a server that answers early and
/// stops reading leaves hanging (with `Connection: close`, Hummingbird does not read the rest
/// of a body the handler left).
///
/// Blocking POSIX sockets with a send and receive timeout, so that a hang shows as `.timedOut`
/// instead of stalling the test; on a thread of their own, so that they never hold one of the
/// few threads the server's tasks run on.
enum EagerWriterClient {
    enum Outcome: Equatable {
        /// The status line's code, and the body's first bytes.
        case answered(Int, String)
        /// The server reset or closed the connection before answering.
        case reset
        case timedOut
    }

    /// Sends a head announcing `bodyBytes`, then `sentBytes` of them (all when nil: a client
    /// that sends fewer and waits is one whose body stalls), then reads the answer.
    static func send(
        port: Int, method: String, path: String, token: String, bodyBytes: Int, sentBytes: Int? = nil, timeout: Int = 60
    ) async -> Outcome {
        await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: blockingSend(
                        port: port, method: method, path: path, token: token, bodyBytes: bodyBytes,
                        sentBytes: sentBytes ?? bodyBytes, timeout: timeout))
            }.start()
        }
    }

    private static func blockingSend(
        port: Int, method: String, path: String, token: String, bodyBytes: Int, sentBytes: Int, timeout: Int
    ) -> Outcome {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .reset }
        defer { close(fd) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return .reset }
        let head =
            "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(bodyBytes)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + [UInt8](repeating: UInt8(ascii: " "), count: sentBytes)
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut : .reset }
            sent += n
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? .timedOut : (answer.isEmpty ? .reset : parse(answer)) }
            if n == 0 { break }
            answer += buffer[0..<n]
            if let text = String(bytes: answer, encoding: .utf8), text.contains("\r\n\r\n"), text.hasSuffix("}") { break }
        }
        return answer.isEmpty ? .reset : parse(answer)
    }

    private static func parse(_ answer: [UInt8]) -> Outcome {
        let text = String(decoding: answer, as: UTF8.self)
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined()
        return .answered(status, String(body.prefix(300)))
    }
}
