import DallyFrugal
import Foundation
import Testing

/// A relay shaped as a slow link: bytes cross no faster than its rate, two connections share
/// it, every delivery waits the one-way delay, and a cut drops every connection while the
/// relay keeps listening. Timings are real (the relay paces by the system's clock): a lower
/// bound is the shaping itself; no upper bound is asserted (a loaded two-core machine once took
/// 37 s to move ten bytes through a 400 ms set-up in a full run), and the bytes that arrive are
/// checked whole instead.
@Suite("ShapedRelay")
struct ShapedRelayTests {
    @Test func bytesCrossAtTheLinksRateSharedByConnectionsAndBothWays() async throws {
        let listener = try TestListener()
        let relay = CountingRelay(
            name: "slow", now: { 0 }, shape: LinkShape(bytesPerSecond: 20_000, roundTrip: .milliseconds(200)))
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        // Two connections, each sending 10,000 bytes up and receiving 10,000 back: 40,000 bytes
        // on one 20,000 B/s link, so at least 2 s (less the first slice's head start).
        let server = PeerThread {
            let sockets = [try listener.accept(), try listener.accept()]
            defer { sockets.forEach { $0.close() } }
            for socket in sockets { _ = try socket.receive(exactly: 10_000) }
            for socket in sockets { try socket.send(patterned(10_000, seed: 1)) }
            return true
        }
        let started = ContinuousClock.now
        async let first = onThread {
            let socket = try TestSocket.connect(port: port)
            defer { socket.close() }
            try socket.send(patterned(10_000, seed: 2))
            return try socket.receive(exactly: 10_000)
        }
        async let second = onThread {
            let socket = try TestSocket.connect(port: port)
            defer { socket.close() }
            try socket.send(patterned(10_000, seed: 3))
            return try socket.receive(exactly: 10_000)
        }
        let answers = try await [first, second]
        let elapsed = ContinuousClock.now - started
        #expect(try await server.value)
        #expect(answers == [patterned(10_000, seed: 1), patterned(10_000, seed: 1)])
        #expect(elapsed >= .milliseconds(1_800), "\(elapsed)")
        #expect(relay.counts.bytesUp == 20_000)
        #expect(relay.counts.bytesDown == 20_000)
        try await relay.stop()
        listener.close()
    }

    /// A connection's set-up delay holds its first bytes as a handshake would: the upstream
    /// sees nothing before it has passed.
    @Test func aNewConnectionsFirstBytesWaitItsSetUp() async throws {
        let listener = try TestListener()
        let relay = CountingRelay(
            name: "slow", now: { 0 }, shape: LinkShape(bytesPerSecond: 1_000_000, setUp: .milliseconds(400)))
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        let server = PeerThread {
            let socket = try listener.accept()
            defer { socket.close() }
            return try socket.receive(exactly: 10)
        }
        let started = ContinuousClock.now
        let client = try TestSocket.connect(port: port)
        try client.send(patterned(10, seed: 4))
        #expect(try await server.value == patterned(10, seed: 4))
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(400), "\(elapsed)")
        client.close()
        try await relay.stop()
        listener.close()
    }

    @Test func aCutDropsEveryConnectionAndTheRelayKeepsListening() async throws {
        let listener = try TestListener()
        let relay = CountingRelay(name: "slow", now: { 0 }, shape: LinkShape(bytesPerSecond: 2_000))
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        // Each step names itself when it fails, so that a failure says which side stalled.
        @Sendable func step<T>(_ name: String, _ body: () throws -> T) throws -> T {
            do { return try body() } catch { throw SocketError(description: "\(name): \(error)") }
        }
        let server = PeerThread {
            let cut = try step("accepting the first connection") { try listener.accept() }
            let rest = try step("reading the cut connection to its end") { try cut.receiveUntilEnd() }
            cut.close()
            let next = try step("accepting the connection after the cut") { try listener.accept() }
            defer { next.close() }
            return (rest.count, try step("reading the 100 bytes after the cut") { try next.receive(exactly: 100) })
        }
        let client = try TestSocket.connect(port: port)
        let connected = ContinuousClock.now
        // The send blocks while the slow link drains; the cut ends it with an error.
        let sending = Task { try? await onThread { try client.send(patterned(50_000, seed: 4)) } }
        // The link drops once a few hundred bytes have crossed it (at 2,000 B/s, a fraction of
        // a second), whatever the machine's load.
        try await Self.wait(for: relay, toCarryUp: 300)
        await relay.cut()
        let open = ContinuousClock.now - connected
        _ = await sending.value
        client.close()
        let again = try TestSocket.connect(port: port)
        try again.send(patterned(100, seed: 5))
        let (delivered, next) = try await server.value
        again.close()
        // What the link carried while the connection was open, and no more than the relay's
        // queue (a tenth of a second) and one slice on top.
        let carried = Int(Double(2_000) * (Double(open.components.seconds) + Double(open.components.attoseconds) / 1e18))
        #expect(delivered <= carried + 2_048, "\(delivered) bytes crossed in \(open)")
        #expect(delivered < 50_000)
        #expect(next == patterned(100, seed: 5))
        try await relay.stop()
        listener.close()
    }

    /// Bytes count as the link carries them: when a cut comes, what waited in the relay's
    /// queue for the link never crossed it and is not counted (counted as read, the whole
    /// queue, a kilobyte here, would be).
    @Test func aCutCountsOnlyWhatTheLinkCarried() async throws {
        let listener = try TestListener()
        let shape = LinkShape(bytesPerSecond: 2_000)
        let relay = CountingRelay(name: "slow", now: { 0 }, shape: shape)
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        let server = PeerThread {
            let cut = try listener.accept()
            defer { cut.close() }
            return try cut.receiveUntilEnd().count
        }
        let client = try TestSocket.connect(port: port)
        let sending = Task { try? await onThread { try client.send(patterned(50_000, seed: 6)) } }
        try await Self.wait(for: relay, toCarryUp: 600)
        await relay.cut()
        _ = await sending.value
        client.close()
        let delivered = try await server.value
        // With no delay, what crossed was delivered at once; one slice may have crossed as the
        // cut closed the connection, before its write.
        let up = relay.counts.bytesUp
        #expect(up >= delivered, "\(up) counted, \(delivered) delivered")
        #expect(up <= delivered + 256, "\(up) counted, \(delivered) delivered")
        try await relay.stop()
        listener.close()
    }

    /// Polls the relay's count (the relay paces by the system's clock) until `bytes` went up,
    /// for 20 s at most: a relay that never gets there fails the test instead of hanging it.
    private static func wait(for relay: CountingRelay, toCarryUp bytes: Int) async throws {
        for _ in 0..<2_000 where relay.counts.bytesUp < bytes {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(relay.counts.bytesUp >= bytes, "\(relay.counts.bytesUp) bytes up, never \(bytes)")
    }
}
