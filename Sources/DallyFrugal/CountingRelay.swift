import NIOCore
import NIOPosix
import Synchronization

/// A raw TCP relay on 127.0.0.1 that counts what crosses it: the benchmark puts one between the
/// gateway and the cloud, so bytes are counted at the socket — request and status lines,
/// headers, bodies, as the gateway's HTTP client really sends them — and every transfer is
/// stamped with the simulated clock for the radio model.
///
/// It forwards bytes without reading them: nothing is parsed, buffered whole or rewritten, so
/// the relay adds no behaviour of its own beyond a loopback hop. Each accepted connection gets
/// its own upstream connection on the same event loop; reads on either side wait while the
/// other side's socket is full (see `RelayGlue`), so a large transfer streams through in
/// bounded memory. When one end closes, the relay closes the other once it has written what
/// it read.
///
/// For example:
///
/// ```
/// let relay = CountingRelay(name: "cellular", now: { clock.now.offset.milliseconds })
/// let port = try await relay.start(upstreamHost: "127.0.0.1", upstreamPort: cloudPort)
/// // point the gateway's cellular uplink at http://127.0.0.1:\(port)
/// let counts = relay.counts
/// try await relay.stop()
/// ```
public final class CountingRelay: Sendable {
    /// Names the relay in errors (a network class, say).
    public let name: String
    private let now: @Sendable () -> Int64
    private let throttle: RelayThrottle?
    private let ledger = RelayLedger()
    private let server = Mutex<ServerState>(.idle)

    private enum ServerState {
        case idle
        case starting
        case listening(any Channel)
        case stopped
    }

    /// - Parameters:
    ///   - now: the simulated clock, in milliseconds, read each time bytes arrive; called on
    ///     event-loop threads, so it must not block.
    ///   - shape: a slow link to imitate (bandwidth shared by all connections and both
    ///     directions, added delay); nil relays at loopback speed.
    public init(name: String, now: @escaping @Sendable () -> Int64, shape: LinkShape? = nil) {
        self.name = name
        self.now = now
        throttle = shape.map(RelayThrottle.init(shape:))
    }

    /// What crossed the relay since it started or was last reset.
    public var counts: RelayCounts { ledger.counts }

    /// How many relayed connections are open now (a client's pool keeping one idle included).
    public var openConnections: Int { ledger.openConnections }

    /// Zeroes the counts, to measure one phase alone; connections stay open.
    public func reset() { ledger.reset() }

    /// Listens on 127.0.0.1 (on a port the system picks) and relays each connection to
    /// `upstreamHost:upstreamPort`.
    ///
    /// - Returns: the port the relay listens on.
    /// - Throws: ``RelayError/alreadyStarted(relay:)`` on a second call (or after ``stop()``);
    ///   ``RelayError/bind(relay:reason:)`` if it cannot listen.
    public func start(upstreamHost: String, upstreamPort: Int) async throws(RelayError) -> Int {
        let fresh = server.withLock { state in
            guard case .idle = state else { return false }
            state = .starting
            return true
        }
        guard fresh else { throw .alreadyStarted(relay: name) }
        var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [self] client in
                relay(client, to: upstreamHost, port: upstreamPort)
            }
        if let shape = throttle?.shape {
            bootstrap = bootstrap.childChannelOption(.maxMessagesPerRead, value: 1)
                .childChannelOption(.recvAllocator, value: Self.smallReads(shape))
        }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        } catch {
            server.withLock { state in
                if case .starting = state { state = .idle }
            }
            throw .bind(relay: name, reason: "\(error)")
        }
        let wanted = server.withLock { state in
            guard case .starting = state else { return false }
            state = .listening(channel)
            return true
        }
        guard wanted else {
            try? await channel.close()
            throw .bind(relay: name, reason: "stopped while starting")
        }
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw .bind(relay: name, reason: "the listening socket has no port")
        }
        return port
    }

    /// Cuts every relayed connection now, as a link that drops would: what is in flight is
    /// lost, and the relay goes on listening for new connections.
    public func cut() async {
        throttle?.clear()
        for channel in ledger.openChannels {
            channel.close(promise: nil)
            try? await channel.closeFuture.get()
        }
        // Reads the cut connections made while closing booked the link too: free it again, or
        // the next connection's bytes would wait behind bytes that will never cross.
        throttle?.clear()
    }

    /// Holds every relayed connection, as a link that stalls without dropping: nothing more is
    /// read from either end until ``release()`` (what the link already carries still
    /// arrives), and connections accepted meanwhile are held too. Each end sees its peer fall
    /// silent; a server's timeout for a stalled body, say, runs out as it would.
    public func hold() { ledger.setHolding(true) }

    /// Lets held connections move again.
    public func release() {
        ledger.setHolding(false)
        for channel in ledger.openChannels { channel.read() }
    }

    /// Stops listening and closes every relayed connection at once (what is in flight is
    /// dropped); waits until all are closed. A stopped relay cannot start again. Stopping twice,
    /// or before starting, does nothing.
    public func stop() async throws(RelayError) {
        let listening: (any Channel)? = server.withLock { state in
            switch state {
            case .idle, .stopped:
                return nil
            case .starting:
                state = .stopped
                return nil
            case .listening(let channel):
                state = .stopped
                return channel
            }
        }
        guard let listening else { return }
        do {
            try await listening.close()
        } catch ChannelError.alreadyClosed {
        } catch {
            throw .close(relay: name, reason: "\(error)")
        }
        for channel in ledger.openChannels {
            channel.close(promise: nil)
            try? await channel.closeFuture.get()
        }
    }

    /// A shaped relay takes one small read at a time, so that it holds no more than its queue
    /// limit (plus one read) of a sender's bytes: a read of NIO's defaults (16 reads of up to
    /// 64 KiB) would take hundreds of kilobytes off the sender at once, which the slow link it
    /// imitates never would.
    private static func smallReads(_ shape: LinkShape) -> AdaptiveRecvByteBufferAllocator {
        let most = max(1_024, shape.sliceBytes)
        return AdaptiveRecvByteBufferAllocator(minimum: 64, initial: most, maximum: most)
    }

    /// Installs the client's side of the glue, connects upstream with the other side, and
    /// lets the client's channel start (and so start reading) only once both are in place.
    /// Runs on the client channel's event loop. If the upstream refuses, the failed future makes
    /// the server bootstrap close the client's connection.
    private func relay(_ client: any Channel, to host: String, port: Int) -> EventLoopFuture<Void> {
        let loop = client.eventLoop
        let connection = ledger.accept(client)
        let ledger = ledger
        client.closeFuture.whenComplete { _ in ledger.closed(connection) }
        let (clientSide, upstreamSide) = RelayGlue.pair(
            connection: connection, ledger: ledger, now: now, throttle: throttle)
        do {
            try client.pipeline.syncOperations.addHandler(clientSide)
        } catch {
            return loop.makeFailedFuture(error)
        }
        let upstreamGlue = NIOLoopBound(upstreamSide, eventLoop: loop)
        var upstream = ClientBootstrap(group: loop)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { upstream in
                do {
                    try upstream.pipeline.syncOperations.addHandler(upstreamGlue.value)
                    return upstream.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return upstream.eventLoop.makeFailedFuture(error)
                }
            }
        if let shape = throttle?.shape {
            upstream = upstream.channelOption(.maxMessagesPerRead, value: 1)
                .channelOption(.recvAllocator, value: Self.smallReads(shape))
        }
        // The client's bytes wait in its socket until the upstream is connected: a set-up
        // delay holds them as a handshake on the real link would.
        let setUp = throttle?.shape.setUp ?? .zero
        let connected =
            setUp > .zero
            ? loop.flatScheduleTask(in: TimeAmount(setUp)) { upstream.connect(host: host, port: port) }.futureResult
            : upstream.connect(host: host, port: port)
        connected.assumeIsolated().whenFailure { _ in clientSide.detach() }
        // A cut that lands while the upstream is connecting finds only the client's channel;
        // the upstream must not outlive it, or the server side would wait for bytes forever.
        return connected.map { upstream in
            if !ledger.connected(connection, upstream: upstream) { upstream.close(promise: nil) }
        }
    }
}

/// Why a relay could not start or stop.
public enum RelayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// ``CountingRelay/start(upstreamHost:upstreamPort:)`` was called twice.
    case alreadyStarted(relay: String)
    /// The relay could not listen on 127.0.0.1.
    case bind(relay: String, reason: String)
    /// The listening socket failed to close.
    case close(relay: String, reason: String)

    public var description: String {
        switch self {
        case .alreadyStarted(let relay): "relay '\(relay)' is already started"
        case .bind(let relay, let reason): "relay '\(relay)' cannot listen on 127.0.0.1: \(reason)"
        case .close(let relay, let reason): "relay '\(relay)' cannot stop listening: \(reason)"
        }
    }
}
