import NIOCore

/// One side of a relayed connection: what it reads goes to its partner's channel, counted on
/// the way; both sides of a pair live on the same event loop, so each calls the other directly.
///
/// Backpressure: a side reads from its socket only while its partner's channel is writable
/// (and active). When the partner's outgoing buffer passes its high-water mark, the read is
/// held until it drains below the low one, so the relay never holds more than about one
/// buffer's worth per direction, however much the two ends want to send.
///
/// Closing: when one end finishes sending (half-closure), the other end's output is shut down
/// once what was read before has been written; when both directions have ended, or one side
/// closes outright, the other side is closed as soon as it has written what it holds.
///
/// Holding: while the relay holds (``CountingRelay/hold()``), neither side asks to read, and
/// what a read asked for before brings in waits, uncounted; releasing asks each channel to
/// read again, which passes on what waited first.
///
/// Shaping: with a ``RelayThrottle``, each write waits for its turn on the shared link and its
/// delay, and a side reads only while its partner holds less than the shape's queue limit, so
/// that the sender's own buffers fill as they would on the slow link. Bytes are then counted
/// as the link carries them, not as they are read: a cut drops what still waits for the link
/// uncounted, as a metered link would bill it, and keeps counted what was in the delay line.
final class RelayGlue: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let direction: RelayDirection
    private let connection: Int
    private let ledger: RelayLedger
    private let now: @Sendable () -> Int64
    private let throttle: RelayThrottle?

    private var partner: RelayGlue?
    private var context: ChannelHandlerContext?
    /// A read the pipeline asked for while the partner could not take more.
    private var pendingRead = false
    /// What one read brought in while the relay held: at most one read's worth, since no other
    /// is asked for until the release.
    private var held: [ByteBuffer] = []
    /// The peer has finished sending.
    private var inputEnded = false
    /// How this side's output is to end once its queued writes are done, if it is.
    private var outputEnd: OutputEnd?
    private var outputClosed = false
    /// This side has closed its channel.
    private var closed = false
    /// Bytes handed to this channel and not yet written to its socket.
    private var unwritten = 0

    private enum OutputEnd: Comparable {
        /// Shut down the output (the partner's peer finished sending).
        case half
        /// Close the channel (the partner's channel is gone).
        case full
    }

    /// - Parameter direction: which way the bytes this side reads travel.
    private init(
        direction: RelayDirection, connection: Int, ledger: RelayLedger, now: @escaping @Sendable () -> Int64,
        throttle: RelayThrottle?
    ) {
        self.direction = direction
        self.connection = connection
        self.ledger = ledger
        self.now = now
        self.throttle = throttle
    }

    /// The two sides of one connection: the client's, which reads bytes going up, and the
    /// upstream's, which reads bytes coming down. The pair references itself until the
    /// handlers are removed with their channels.
    static func pair(
        connection: Int, ledger: RelayLedger, now: @escaping @Sendable () -> Int64, throttle: RelayThrottle? = nil
    ) -> (client: RelayGlue, upstream: RelayGlue) {
        let client = RelayGlue(direction: .up, connection: connection, ledger: ledger, now: now, throttle: throttle)
        let upstream = RelayGlue(direction: .down, connection: connection, ledger: ledger, now: now, throttle: throttle)
        client.partner = upstream
        upstream.partner = client
        return (client, upstream)
    }

    /// Breaks the pair's reference cycle when the upstream could not be reached and the
    /// upstream side never joined a pipeline.
    func detach() {
        partner?.partner = nil
        partner = nil
    }

    // MARK: - Events of this side's channel

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        // The partner may have held a read until this side could take its bytes.
        partner?.partnerCanTakeMore()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = Self.unwrapInboundIn(data)
        // A read asked for before the hold may still complete: its bytes wait for the release.
        if ledger.isHolding || !held.isEmpty {
            held.append(buffer)
            return
        }
        forward(buffer)
    }

    private func forward(_ buffer: ByteBuffer) {
        // A shaped link counts bytes as it carries them (``partnerWrite(_:carrying:)``): what
        // waits for the link when a cut comes never crossed it.
        if throttle == nil { ledger.read(direction, bytes: buffer.readableBytes, connection: connection, at: now()) }
        partner?.partnerWrite(buffer, carrying: direction)
    }

    /// Passes on what was read while the relay held.
    private func forwardHeld() {
        guard !held.isEmpty else { return }
        let buffers = held
        held = []
        for buffer in buffers { forward(buffer) }
        partner?.partnerFlush()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.partnerFlush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, event == .inputClosed else {
            return context.fireUserInboundEventTriggered(event)
        }
        inputEnded = true
        // What came before the end goes first, held or not: the peer is done with it.
        forwardHeld()
        partner?.endOutput(.half)
        // Both directions over on this socket: nothing more can move.
        if outputClosed, !closed {
            closed = true
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        forwardHeld()
        partner?.endOutput(.full)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A reset or failed write: close, and channelInactive takes the partner down.
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerCanTakeMore() }
        context.fireChannelWritabilityChanged()
    }

    /// Reads only while the partner can take what is read, and the relay does not hold.
    func read(context: ChannelHandlerContext) {
        let holding = ledger.isHolding
        if !holding { forwardHeld() }
        if !holding, partner?.canTakeMore == true {
            context.read()
        } else {
            pendingRead = true
        }
    }

    // MARK: - Calls from the partner

    private var canTakeMore: Bool {
        guard let channel = context?.channel, !outputClosed, outputEnd == nil else { return false }
        let roomOnLink = throttle.map { unwritten < $0.shape.queueLimit } ?? true
        return channel.isActive && channel.isWritable && roomOnLink
    }

    private func partnerCanTakeMore() {
        guard pendingRead, partner?.canTakeMore == true, !ledger.isHolding, let context else { return }
        pendingRead = false
        context.read()
    }

    /// Writes what the partner read, going `direction`; on a shaped link a slice at a time,
    /// each counted once the link has carried it and written once its delay has passed.
    private func partnerWrite(_ buffer: ByteBuffer, carrying direction: RelayDirection) {
        guard let context, !outputClosed else { return }
        guard let throttle else { return write(buffer, context: context) }
        var rest = buffer
        while rest.readableBytes > 0, let slice = rest.readSlice(length: min(rest.readableBytes, throttle.shape.sliceBytes)) {
            let count = slice.readableBytes
            unwritten += count
            ledger.queued(count)
            let booking = throttle.book(count)
            let loop = context.eventLoop.assumeIsolated()
            let countIfCarried = { [self] in
                if throttle.carried(booking) { ledger.read(direction, bytes: count, connection: connection, at: now()) }
            }
            // Counted before it is written: with no delay, in the same task (two tasks due at
            // the same moment may run in either order).
            let delayed = booking.delivered > booking.crossed
            if delayed { loop.scheduleTask(deadline: booking.crossed, countIfCarried) }
            loop.scheduleTask(deadline: booking.delivered) { [self] in
                if !delayed { countIfCarried() }
                unwritten -= count
                ledger.queued(-count)
                // A slice a cut came before the link carried never arrives, even where the
                // connection has not closed yet.
                if let context = self.context, !outputClosed, throttle.carried(booking) {
                    write(slice, context: context)
                    context.flush()
                }
                finishOutputIfDrained()
                partner?.partnerCanTakeMore()
            }
        }
    }

    private func write(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        let count = buffer.readableBytes
        unwritten += count
        ledger.queued(count)
        let promise = context.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { [self] _ in
            unwritten -= count
            ledger.queued(-count)
            finishOutputIfDrained()
        }
        context.write(Self.wrapOutboundOut(buffer), promise: promise)
    }

    private func partnerFlush() {
        context?.flush()
    }

    /// Ends this side's output once what is queued has been written.
    private func endOutput(_ end: OutputEnd) {
        outputEnd = max(outputEnd ?? end, end)
        finishOutputIfDrained()
    }

    /// Once nothing is queued: closes the channel if asked to or if its input has ended too,
    /// otherwise shuts down its output only. A channel whose output was shut down is still
    /// closed when the partner's channel goes away.
    private func finishOutputIfDrained() {
        guard unwritten == 0, let end = outputEnd, !closed, let context else { return }
        if end == .full || inputEnded {
            closed = true
            outputClosed = true
            context.close(promise: nil)
        } else if !outputClosed {
            outputClosed = true
            context.close(mode: .output, promise: nil)
        }
    }
}

@available(*, unavailable)
extension RelayGlue: Sendable {}
