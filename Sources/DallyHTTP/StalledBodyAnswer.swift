import DallyCore
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `408 body_timeout` in JSON, and closes the connection, when a request's body stops
/// coming: no byte of it for `limit` while the rest is awaited (nginx's `client_body_timeout`).
///
/// Without it a client that stops mid-body (a crashed app, a cut Wi-Fi that never resets the
/// connection) holds its connection, and the handler that waits for the body, until the
/// connection is found dead. The clock restarts with every piece of the body, so a slow link
/// that keeps moving bytes (the gateway's uploads over a 2 kbit/s satellite uplink) is never
/// cut; only silence is. A request whose answer has begun (a refusal decided before the body
/// was read) is left to it.
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
    /// When the body now awaited last moved; nil between requests and once it has ended.
    private var lastMoved: NIODeadline?
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
            lastMoved = .now()
            if checks == nil { startChecks(context: context) }
        case .body where lastMoved != nil:
            lastMoved = .now()
        case .head, .body:
            break
        case .end:
            lastMoved = nil
        }
        context.fireChannelRead(data)
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
        guard let lastMoved, NIODeadline.now() - lastMoved >= limit, !answering, context.channel.isActive else { return }
        self.lastMoved = nil
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
