import NIOCore

/// Wakes a parked long-poll when its client goes away.
///
/// Hummingbird allows remote half-closure, so a client's FIN does not close the channel: it
/// arrives as `ChannelEvent.inputClosed`. This handler sits at the front of the connection's
/// pipeline for the duration of one wait and turns that event, an error or the channel going
/// inactive into ``WakeReason/disconnected``. Unlike consuming the request body with an
/// inbound-close handler, it needs no task per waiter and leaves the connection usable for
/// the client's next request.
final class DisconnectWatcher: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let waiter: Waiter

    init(waiter: Waiter) {
        self.waiter = waiter
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { waiter.resume(.disconnected) }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        waiter.resume(.disconnected)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        waiter.resume(.disconnected)
        context.fireErrorCaught(error)
    }

    /// Runs `body` with a watcher for `waiter` on `channel`, removing it afterwards, however
    /// `body` ends: the connection outlives the wait and must not collect watchers.
    static func watching<T>(
        _ channel: any Channel, waiter: Waiter, _ body: () async throws -> T
    ) async throws -> T {
        let watcher = DisconnectWatcher(waiter: waiter)
        do {
            try await channel.pipeline.addHandler(watcher, position: .first).get()
        } catch {
            // The channel is already gone.
            waiter.resume(.disconnected)
            return try await body()
        }
        defer { channel.pipeline.removeHandler(watcher, promise: nil) }
        if !channel.isActive { waiter.resume(.disconnected) }
        return try await body()
    }
}
