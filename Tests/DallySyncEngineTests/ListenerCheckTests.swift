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
        #expect(await !check.accepts(timeout: .seconds(5)))
    }
}
