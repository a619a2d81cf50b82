#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Blocking loopback sockets for the relay's tests: plain POSIX calls on threads of their own,
/// so the relay is exercised by peers that share nothing with it (no NIO on either end).
/// Every socket times out after 120 s, so a relay that stalls fails a test instead of hanging it.
/// Generous on purpose: the whole suite runs in parallel on two cores, and at its start hundreds
/// of tests opening stores keep Swift's two pool threads busy for most of a minute (relay tests
/// took 46–58 s there), so the peer a socket waits for can be that late.
struct SocketError: Error, CustomStringConvertible {
    let description: String

    static func last(_ operation: String) -> SocketError {
        SocketError(description: "\(operation): \(String(cString: strerror(errno)))")
    }
}

/// One connected TCP socket.
final class TestSocket: Sendable {
    let fd: Int32

    init(fd: Int32) throws {
        self.fd = fd
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        let size = socklen_t(MemoryLayout<timeval>.size)
        guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, size) == 0,
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, size) == 0
        else { throw SocketError.last("setsockopt") }
    }

    /// Connects to 127.0.0.1:`port`; `receiveBuffer` shrinks the kernel's receive buffer first,
    /// so that a peer that does not read pushes back on the sender sooner.
    static func connect(port: Int, receiveBuffer: Int32? = nil) throws -> TestSocket {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError.last("socket") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                posixConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = SocketError.last("connect")
            posixClose(fd)
            throw error
        }
        return try TestSocket(fd: fd)
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { posixSend(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw SocketError.last("send") }
            sent += n
        }
    }

    /// Up to `limit` bytes; empty at end of stream.
    func receive(upTo limit: Int = 65_536) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, limit, 0) }
        guard n >= 0 else { throw SocketError.last("recv") }
        return Array(buffer[..<n])
    }

    func receive(exactly count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count {
            let chunk = try receive(upTo: min(count - bytes.count, 1 << 20))
            guard !chunk.isEmpty else {
                throw SocketError(description: "end of stream after \(bytes.count) of \(count) bytes")
            }
            bytes += chunk
        }
        return bytes
    }

    /// Everything until the peer closes.
    func receiveUntilEnd() throws -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let chunk = try receive()
            if chunk.isEmpty { return bytes }
            bytes += chunk
        }
    }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    func close() { posixClose(fd) }
}

/// A listening socket on 127.0.0.1 at a port the system picks.
final class TestListener: Sendable {
    let fd: Int32
    let port: Int

    /// - Parameter receiveBuffer: the receive buffer accepted sockets inherit.
    init(receiveBuffer: Int32? = nil) throws {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw SocketError.last("socket") }
        if var size = receiveBuffer {
            setsockopt(socketFD, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(socketFD, 16) == 0 else {
            let error = SocketError.last("bind/listen")
            posixClose(socketFD)
            throw error
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
        }
        fd = socketFD
        port = Int(UInt16(bigEndian: local.sin_port))
    }

    func accept() throws -> TestSocket {
        let client = posixAccept(fd)
        guard client >= 0 else { throw SocketError.last("accept") }
        return try TestSocket(fd: client)
    }

    func close() { posixClose(fd) }
}

// The POSIX calls under other names, since TestSocket's methods shadow theirs.
private func posixConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
private func posixClose(_ fd: Int32) { _ = close(fd) }
private func posixSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    send(fd, bytes, count, Int32(MSG_NOSIGNAL))
    #else
    send(fd, bytes, count, 0)
    #endif
}
private func posixAccept(_ fd: Int32) -> Int32 { accept(fd, nil, nil) }

private func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
}

/// Runs blocking `body` on a thread of its own, off the cooperative pool (two cores are few).
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}

/// Blocks a peer's thread until `condition` holds (polled every millisecond, for at most ten
/// seconds): for a peer that must wait for the relay to reach a state, not for time to pass.
///
/// - Returns: whether the condition held in time.
@discardableResult
func blockUntil(_ condition: () -> Bool) -> Bool {
    for _ in 0..<10_000 {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}

/// A blocking peer on a thread started at once, whose result a test awaits later.
///
/// Not `Task { try await onThread { … } }`: a task waits for a thread of the cooperative pool,
/// which with the whole suite running on two cores can take longer than the other peer's socket
/// timeout, so the test would fail on a peer that had not started yet.
final class PeerThread<T: Sendable>: Sendable {
    private enum State {
        case running(waiting: [CheckedContinuation<T, any Error>])
        case finished(Result<T, any Error>)
    }

    private let state = Mutex(State.running(waiting: []))

    init(_ body: @escaping @Sendable () throws -> T) {
        Thread.detachNewThread { [self] in
            let result = Result { try body() }
            let waiting = state.withLock { state -> [CheckedContinuation<T, any Error>] in
                guard case .running(let waiting) = state else { return [] }
                state = .finished(result)
                return waiting
            }
            for continuation in waiting { continuation.resume(with: result) }
        }
    }

    /// The body's result, once its thread has finished.
    var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let finished = state.withLock { state -> Result<T, any Error>? in
                    switch state {
                    case .running(var waiting):
                        waiting.append(continuation)
                        state = .running(waiting: waiting)
                        return nil
                    case .finished(let result):
                        return result
                    }
                }
                if let finished { continuation.resume(with: finished) }
            }
        }
    }
}

/// A length-prefixed message: 4 bytes of big-endian length, then `body`.
func framed(_ body: [UInt8]) -> [UInt8] {
    let n = UInt32(body.count)
    return [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + body
}

extension TestSocket {
    /// Reads one ``framed(_:)`` message's body.
    func receiveFrame() throws -> [UInt8] {
        let header = try receive(exactly: 4)
        let n = header.reduce(0) { $0 << 8 | Int($1) }
        return try receive(exactly: n)
    }
}

/// `count` bytes of a pattern that a dropped, repeated or reordered chunk would break.
func patterned(_ count: Int, seed: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31 &+ seed &+ $0 >> 12) % 251) }
}
