import DallyFrugal
import Foundation
import Synchronization
import Testing

/// The relay between real sockets: exact byte counts both ways, request counting on a
/// keep-alive connection, activities per simulated millisecond, closing in both orders, and a
/// transfer large enough that it only fits through with backpressure.
@Suite("CountingRelay")
struct CountingRelayTests {
    /// A simulated clock the test moves.
    final class Clock: Sendable {
        private let millis = Mutex<Int64>(0)
        func set(_ value: Int64) { millis.withLock { $0 = value } }
        var now: @Sendable () -> Int64 { { [self] in millis.withLock { $0 } } }
    }

    @Test func countsExactBytesRequestsAndActivitiesOverAKeepAliveConnection() async throws {
        let listener = try TestListener()
        let clock = Clock()
        let relay = CountingRelay(name: "test", now: clock.now)
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)

        // Three request/response exchanges on one connection: requests of 100, 200, 300 bytes,
        // answers of 1000, 2000, 3000 (each with a 4-byte length prefix).
        let server = PeerThread {
            let socket = try listener.accept()
            defer { socket.close() }
            var seen: [Int] = []
            for exchange in 1...3 {
                seen.append(try socket.receiveFrame().count)
                try socket.send(framed(patterned(1000 * exchange, seed: exchange)))
            }
            // The client's half-close must reach the server as the end of the stream.
            let afterHalfClose = try socket.receive()
            return (seen, afterHalfClose)
        }
        let client = try await onThread {
            let socket = try TestSocket.connect(port: port)
            defer { socket.close() }
            var answers: [[UInt8]] = []
            for exchange in 1...3 {
                clock.set(exchange == 1 ? 1_000 : 2_000)
                let request = framed(patterned(100 * exchange, seed: exchange))
                if exchange == 2 {
                    // One request in two writes, the second once the relay has read the first
                    // (two reads, not one by chance): still one request.
                    try socket.send(Array(request[..<50]))
                    let firstHalf = 4 + 100 + 50
                    blockUntil { relay.counts.bytesUp >= firstHalf }
                    #expect(relay.counts.bytesUp == firstHalf)
                    try socket.send(Array(request[50...]))
                } else {
                    try socket.send(request)
                }
                answers.append(try socket.receiveFrame())
            }
            socket.shutdownWrite()
            // The server closes after our half-close; the relay passes that on.
            let rest = try socket.receiveUntilEnd()
            return (answers, rest)
        }
        let served = try await server.value
        #expect(served.0 == [100, 200, 300])
        #expect(served.1.isEmpty)
        #expect(client.0 == (1...3).map { patterned(1000 * $0, seed: $0) })
        #expect(client.1.isEmpty)

        let counts = relay.counts
        #expect(counts.bytesUp == 3 * 4 + 600)
        #expect(counts.bytesDown == 3 * 4 + 6000)
        #expect(counts.connections == 1)
        #expect(counts.requests == 3)
        #expect(
            counts.activities == [
                RelayActivity(at: 1_000, connection: 0, bytesUp: 104, bytesDown: 1_004),
                RelayActivity(at: 2_000, connection: 0, bytesUp: 508, bytesDown: 5_008),
            ])
        try await relay.stop()
        listener.close()
    }

    @Test func anUpstreamThatClosesAfterAnsweringDeliversTheWholeAnswerFirst() async throws {
        let listener = try TestListener()
        let relay = CountingRelay(name: "test", now: { 0 })
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        // Larger than the kernel's buffers take while the client is not reading, so the relay
        // still holds part of it when the upstream's end of stream arrives.
        let answer = patterned(8 << 20, seed: 7)
        let server = PeerThread {
            let socket = try listener.accept()
            _ = try socket.receiveFrame()
            try socket.send(answer)
            // "Connection: close": gone at once, with the answer still in flight.
            socket.close()
        }
        let received = try await onThread {
            let socket = try TestSocket.connect(port: port, receiveBuffer: 65_536)
            defer { socket.close() }
            try socket.send(framed([1, 2, 3]))
            // Read only once the relay holds part of the answer (more than the sockets' buffers
            // take): the upstream's end of stream then comes while it does.
            let held = blockUntil { relay.counts.maxQueuedBytes > 0 }
            return (held, try socket.receiveUntilEnd())
        }
        try await server.value
        #expect(received.0, "the relay never held part of the answer")
        #expect(received.1 == answer)
        #expect(relay.counts.bytesUp == 7)
        #expect(relay.counts.bytesDown == 8 << 20)
        #expect(relay.counts.requests == 1)
        try await relay.stop()
        listener.close()
    }

    /// 10 MB each way while the receiving end does not read for a while, through small receive
    /// buffers: without backpressure the relay would read everything and hold megabytes.
    @Test func tenMegabytesEachWayStreamThroughInBoundedMemory() async throws {
        let size = 10_000_000
        let listener = try TestListener(receiveBuffer: 65_536)
        let relay = CountingRelay(name: "test", now: { 0 })
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        let upload = patterned(size, seed: 1)
        let download = patterned(size, seed: 2)
        let server = PeerThread {
            let socket = try listener.accept()
            defer { socket.close() }
            // Not reading until the relay holds upload bytes it cannot pass on: 10 MB is more
            // than the sockets' buffers take.
            blockUntil { relay.counts.maxQueuedBytes > 0 }
            let received = try socket.receive(exactly: size)
            try socket.send(download)
            return received == upload
        }
        let received = try await onThread {
            let socket = try TestSocket.connect(port: port, receiveBuffer: 65_536)
            defer { socket.close() }
            try socket.send(upload)
            // Not reading until the download fills this end's 64 KiB receive buffer.
            blockUntil { relay.counts.bytesDown >= 65_536 }
            return try socket.receive(exactly: size)
        }
        #expect(try await server.value)
        #expect(received == download)
        let counts = relay.counts
        #expect(counts.bytesUp == size)
        #expect(counts.bytesDown == size)
        #expect(counts.requests == 1)
        #expect(counts.maxQueuedBytes > 0)
        #expect(counts.maxQueuedBytes < 1 << 20, "the relay held \(counts.maxQueuedBytes) bytes")
        try await relay.stop()
        listener.close()
    }

    @Test func resetStartsTheCountsAfreshOnAnOpenConnection() async throws {
        let listener = try TestListener()
        let clock = Clock()
        let relay = CountingRelay(name: "test", now: clock.now)
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        let server = PeerThread {
            let socket = try listener.accept()
            defer { socket.close() }
            for _ in 1...2 {
                _ = try socket.receiveFrame()
                try socket.send(framed([9, 9]))
            }
            _ = try socket.receiveUntilEnd()
        }
        let socket = try await onThread { try TestSocket.connect(port: port) }
        clock.set(5)
        try await onThread {
            try socket.send(framed([1]))
            _ = try socket.receiveFrame()
        }
        #expect(relay.counts.requests == 1)
        relay.reset()
        // The answer's 6 bytes can still count as queued: the client may read them before the
        // relay's write completion runs, and a reset keeps what is queued at that moment.
        var afterReset = relay.counts
        #expect(afterReset.maxQueuedBytes <= 6)
        afterReset.maxQueuedBytes = 0
        #expect(afterReset == RelayCounts())
        clock.set(9)
        try await onThread {
            try socket.send(framed([1, 2, 3]))
            _ = try socket.receiveFrame()
            socket.close()
        }
        try await server.value
        let counts = relay.counts
        #expect(counts.connections == 0)
        #expect(counts.requests == 1)
        #expect(counts.bytesUp == 7)
        #expect(counts.bytesDown == 6)
        #expect(counts.activities == [RelayActivity(at: 9, connection: 0, bytesUp: 7, bytesDown: 6)])
        try await relay.stop()
        listener.close()
    }

    /// A held relay reads nothing from either end, and after its release the held bytes cross
    /// whole, on the same connection.
    @Test func aHeldRelayPassesNothingUntilItIsReleased() async throws {
        let listener = try TestListener()
        let relay = CountingRelay(name: "test", now: Clock().now)
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        let server = PeerThread {
            let socket = try listener.accept()
            defer { socket.close() }
            for _ in 1...2 {
                let request = try socket.receiveFrame()
                try socket.send(framed(Array(request.reversed())))
            }
            _ = try socket.receiveUntilEnd()
        }
        let socket = try await onThread { try TestSocket.connect(port: port) }
        // One exchange crosses before the hold: the connection is relayed both ways.
        let first = try await onThread {
            try socket.send(framed([7, 8]))
            return try socket.receiveFrame()
        }
        #expect(first == [8, 7])
        relay.hold()
        try await onThread { try socket.send(framed([1, 2, 3])) }
        // Bounded polling for what must not happen: nothing more crosses however long the hold.
        for _ in 0..<10 {
            try await Task.sleep(for: .milliseconds(20))
            #expect(relay.counts.bytesUp == 6)
        }
        relay.release()
        let second = try await onThread {
            let answer = try socket.receiveFrame()
            socket.close()
            return answer
        }
        try await server.value
        #expect(second == [3, 2, 1])
        #expect(relay.counts.bytesUp == 13)
        #expect(relay.counts.bytesDown == 13)
        try await relay.stop()
        listener.close()
    }

    @Test func stopClosesOpenConnectionsAndAStartedRelayCannotStartAgain() async throws {
        let listener = try TestListener()
        let relay = CountingRelay(name: "cellular", now: { 0 })
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        await #expect(throws: RelayError.alreadyStarted(relay: "cellular")) {
            _ = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: listener.port)
        }
        let server = PeerThread { try listener.accept() }
        let socket = try await onThread { try TestSocket.connect(port: port) }
        let upstream = try await server.value
        try await onThread {
            try socket.send(framed([1]))
            _ = try upstream.receiveFrame()
        }
        try await relay.stop()
        // Both ends see the relay go away.
        let clientEnd = try await onThread { try socket.receiveUntilEnd() }
        let serverEnd = try await onThread { try upstream.receiveUntilEnd() }
        #expect(clientEnd.isEmpty)
        #expect(serverEnd.isEmpty)
        #expect(relay.counts.connections == 1)
        try await relay.stop()
        socket.close()
        upstream.close()
        listener.close()
    }

    @Test func aRefusedUpstreamClosesTheClientsConnection() async throws {
        // A port nobody listens on: bind one, note it, close it.
        let unused = try TestListener()
        let deadPort = unused.port
        unused.close()
        let relay = CountingRelay(name: "test", now: { 0 })
        let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: deadPort)
        let outcome = try await onThread { () -> String in
            let socket = try TestSocket.connect(port: port)
            defer { socket.close() }
            do {
                return try socket.receiveUntilEnd().isEmpty ? "closed" : "data"
            } catch {
                return "closed"  // reset by the relay
            }
        }
        #expect(outcome == "closed")
        #expect(relay.counts.connections == 1)
        #expect(relay.counts.bytesUp == 0)
        try await relay.stop()
    }
}
