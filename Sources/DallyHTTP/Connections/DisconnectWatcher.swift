import NIOCore

/// Tells a parked long-poll that its client went away.
///
/// Hummingbird allows remote half-closure, so a client's FIN does not close the channel: it
/// arrives as `ChannelEvent.inputClosed`. This handler sits at the front of the connection's
/// pipeline for the duration of one wait and reports that event, an error or the channel going
/// inactive through `onDisconnect` (which may run more than once). Unlike consuming the request body with an
/// inbound-close handler, it needs no task per waiter and leaves the connection usable for
/// the client's next request.
public final class DisconnectWatcher: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    public typealias InboundIn = ByteBuffer

    private let onDisconnect: @Sendable () -> Void

    init(onDisconnect: @escaping @Sendable () -> Void) {
        self.onDisconnect = onDisconnect
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed { onDisconnect() }
        context.fireUserInboundEventTriggered(event)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        onDisconnect()
        context.fireChannelInactive()
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        onDisconnect()
        context.fireErrorCaught(error)
    }

    /// Runs `body` with a watcher on `channel`, removing it afterwards, however `body` ends:
    /// the connection outlives the wait and must not collect watchers.
    public static func watching<T>(
        _ channel: any Channel, onDisconnect: @escaping @Sendable () -> Void, _ body: () async throws -> T
    ) async throws -> T {
        let watcher = DisconnectWatcher(onDisconnect: onDisconnect)
        do {
            try await channel.pipeline.addHandler(watcher, position: .first).get()
        } catch {
            // The channel is already gone.
            onDisconnect()
            return try await body()
        }
        defer { channel.pipeline.removeHandler(watcher, promise: nil) }
        if !channel.isActive { onDisconnect() }
        return try await body()
    }
}
