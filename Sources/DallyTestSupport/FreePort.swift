import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP port on 127.0.0.1 that was free a moment ago: for servers that cannot be told to
/// pick their own (PostgreSQL) and report it.
public enum FreePort {
    public static func find() throws -> Int {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestSupportError("socket() failed: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw TestSupportError("bind() to a free port failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestSupportError("getsockname() failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A free port below the system's ephemeral range (Linux: 32768 and up), for a server
    /// that stops and must come back on the same port while clients keep retrying it: a
    /// client's connection attempt to a port in the ephemeral range can be given that very
    /// port as its own and connect to itself (TCP simultaneous open), and then holds it.
    ///
    /// Ports are handed out in turn, never twice in one process: a server that is down for a
    /// while keeps its port, where a random pick could give it to another test meanwhile.
    public static func outsideEphemeralRange() throws -> Int {
        for _ in 0..<(ownRange.count) {
            let port = nextOwn.withLock { next in
                defer { next = next + 1 == ownRange.upperBound ? ownRange.lowerBound : next + 1 }
                return next
            }
            if canBind(port) { return port }
        }
        throw TestSupportError("no free port between \(ownRange.lowerBound) and \(ownRange.upperBound)")
    }

    private static let ownRange = 20_000..<32_000
    /// Where this process's turn starts: apart from another test process's, most likely.
    private static let nextOwn = Mutex(Int.random(in: ownRange))

    private static func canBind(_ port: Int) -> Bool {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
