import DallyCore
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `408 body_timeout` in JSON, and closes the connection, when a request's body stops
/// coming: no byte of it for `limit` while the rest is awaited (nginx's `client_body_timeout`).
///
/// Without it a client that stops mid-body (a crashed app, a cut Wi-Fi that never resets the
/// connection) holds its connection, and the handler that waits for the body, until the
/// connection is found dead. The clock runs only while the server asks for more of the body
/// and restarts with every piece, so a slow link that keeps moving bytes (the gateway's uploads
/// over a 2 kbit/s satellite uplink) is never cut, nor a client whose bytes wait in the socket
/// while the server is busy; only the client's silence is. A request whose answer has begun (a
/// refusal decided before the body was read) is left to it.
///
/// ```swift
/// HTTP1Channel(responder: responder, configuration: .init(
///     additionalChannelHandlers: [StalledBodyAnswer(limit: .seconds(60))]))
/// ```
public final class StalledBodyAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    private let limit: TimeAmount
    /// Whether a request's body is under way: its head came, its end not yet.
    private var bodyUnderWay = false
    /// Since when the server has asked for more of that body and got none; nil while it is not
    /// asking. Only the server's own asking counts: a handler that stops reading (backpressure,
    /// a busy box) leaves the bytes in the socket, and that is not the client's stall.
    private var waitingSince: NIODeadline?
    /// One check per connection, a few times per `limit`, started with its first body: a
    /// timer set and cancelled for every request would cost the hot path more than it guards.
    private var checks: RepeatedTask?
    /// Whether an answer's head has gone out and its end not yet.
    private var answering = false

    public init(limit: TimeAmount) {
        self.limit = limit
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head) where Self.announcesBody(head):
            bodyUnderWay = true
            waitingSince = nil
            if checks == nil { startChecks(context: context) }
        case .body:
            waitingSince = nil
        case .head:
            break
        case .end:
            bodyUnderWay = false
            waitingSince = nil
        }
        context.fireChannelRead(data)
    }

    /// The server asks for more bytes: from now, while a body is under way, the client owes them.
    public func read(context: ChannelHandlerContext) {
        if bodyUnderWay, waitingSince == nil { waitingSince = .now() }
        context.read()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind != .informational: answering = true
        case .end: answering = false
        default: break
        }
        context.write(data, promise: promise)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        stopChecks()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        stopChecks()
    }

    /// Whether a body follows the head: most requests (GETs, long-polls) have none.
    static func announcesBody(_ head: HTTPRequest) -> Bool {
        if head.headerFields[.transferEncoding] != nil { return true }
        guard let length = head.headerFields[.contentLength] else { return false }
        return length != "0"
    }

    private func startChecks(context: ChannelHandlerContext) {
        // A body that stops is answered within a quarter of `limit` after its limit passed.
        let period = TimeAmount.nanoseconds(max(limit.nanoseconds / 4, 1_000_000))
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        checks = context.eventLoop.scheduleRepeatedTask(initialDelay: period, delay: period) { _ in
            let (handler, context) = loopBound.value
            handler.check(context: context)
        }
    }

    private func stopChecks() {
        checks?.cancel()
        checks = nil
    }

    private func check(context: ChannelHandlerContext) {
        guard bodyUnderWay, let waitingSince, NIODeadline.now() - waitingSince >= limit, !answering,
            context.channel.isActive
        else { return }
        bodyUnderWay = false
        self.waitingSince = nil
        stopChecks()
        let nanoseconds = limit.nanoseconds
        let waited = nanoseconds % 1_000_000_000 == 0 ? "\(nanoseconds / 1_000_000_000) s" : "\(nanoseconds / 1_000_000) ms"
        let refusal = DallyError(
            .bodyTimeout,
            "no byte of the request's body came for \(waited) (server.body_timeout); nothing of it was saved: send it again, without pausing")
        answering = true
        ClosingAnswer.write(refusal, context: context)
    }
}
