import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TCP connection to 127.0.0.1, for tests that send what an HTTP client would not
/// (a head alone, garbage, nothing at all). Use it on a thread of its own: blocking calls must
/// not hold the threads the server's tasks run on.
struct RawConnection {
    /// What one ``receive()`` got.
    enum Received {
        case bytes([UInt8])
        /// The server closed the connection.
        case closed
        /// Nothing came within the receive timeout (or the call failed).
        case nothing
    }

    private let fd: Int32

    /// Connects to `port`; each ``receive()`` waits at most `receiveTimeout` seconds.
    init(port: Int, receiveTimeout: Int) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var limit = timeval(tv_sec: receiveTimeout, tv_usec: 0)
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
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Closes the sending half (a client that sent all it will): the server reads the end of
    /// its input, and its answer can still come back.
    func finishSending() { _ = shutdown(fd, Int32(SHUT_WR)) }

    func receive() -> Received {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? .bytes(Array(buffer[0..<n])) : n == 0 ? .closed : .nothing
    }

    /// Reads until the server closes the connection (true) or a receive times out (false).
    func receiveUntilClosed() -> (closed: Bool, text: String) {
        var received: [UInt8] = []
        while true {
            switch receive() {
            case .bytes(let bytes): received += bytes
            case .closed: return (true, String(decoding: received, as: UTF8.self))
            case .nothing: return (false, String(decoding: received, as: UTF8.self))
            }
        }
    }

    func close() { _ = Glibc.close(fd) }
}
