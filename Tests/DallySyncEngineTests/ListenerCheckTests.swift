import Glibc
import NIOCore
import NIOPosix
import Testing

@testable import DallySyncEngine

@Suite("ListenerCheck: whether a node accepts connections, before asking it over HTTP")
struct ListenerCheckTests {
    @Test(arguments: [
        ("http://127.0.0.1:8090", "127.0.0.1", 8090, true),
        ("http://cloud.example", "cloud.example", 80, false),
        ("https://cloud.example", "cloud.example", 443, false),
        ("https://cloud.example:8443/base", "cloud.example", 8443, false),
        ("http://[::1]:8090", "::1", 8090, true),
    ])
    func aNodesHostAndPortAreReadFromItsURL(url: String, host: String, port: Int, literal: Bool) throws {
        let check = try #require(ListenerCheck(url: url))
        #expect(check.host == host)
        #expect(check.port == port)
        // An IP address is connected to directly; a name goes through the resolver.
        #expect((check.address != nil) == literal)
    }

    @Test(arguments: ["", "not a url", "ftp://cloud.example", "http://:8090"])
    func aURLWithoutHostOrKnownPortHasNoCheck(url: String) {
        #expect(ListenerCheck(url: url) == nil)
    }

    @Test func aListeningPortAcceptsAndAClosedOneDoesNot() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(server.localAddress?.port)
        let check = try #require(ListenerCheck(url: "http://127.0.0.1:\(port)"))
        #expect(await check.accepts(timeout: .seconds(5)))
        try await server.close()

        // The closed port: one held bound but not listening, so that no other test of the
        // process can listen on it meanwhile (a port given back was taken again once, in a
        // full run, and accepted).
        let held = try BoundPort()
        defer { held.close() }
        let closed = try #require(ListenerCheck(url: "http://127.0.0.1:\(held.port)"))
        #expect(await !closed.accepts(timeout: .seconds(5)))
    }

    /// A TCP port of 127.0.0.1 bound and never listened on: a connection to it is refused.
    struct BoundPort {
        let descriptor: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
                }
            }
            guard fd >= 0, bound else {
                if fd >= 0 { _ = Glibc.close(fd) }
                throw BindFailed(errno: errno)
            }
            descriptor = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        func close() { _ = Glibc.close(descriptor) }

        struct BindFailed: Error { let errno: Int32 }
    }
}
