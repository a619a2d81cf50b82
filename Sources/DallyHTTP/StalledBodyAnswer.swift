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
    /// The watch over the body now awaited; nil between requests and once it has ended.
    private var watch: Scheduled<Void>?
    /// Whether an answer's head has gone out and its end not yet.
    private var answering = false

    public init(limit: TimeAmount) {
        self.limit = limit
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head) where Self.announcesBody(head):
            restart(context: context)
        case .body where watch != nil:
            restart(context: context)
        case .head, .body:
            break
        case .end:
            stop()
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
        stop()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    /// Whether a body follows the head: most requests (GETs, long-polls) have none, and pay
    /// for no watch.
    static func announcesBody(_ head: HTTPRequest) -> Bool {
        if head.headerFields[.transferEncoding] != nil { return true }
        guard let length = head.headerFields[.contentLength] else { return false }
        return length != "0"
    }

    private func restart(context: ChannelHandlerContext) {
        watch?.cancel()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        watch = context.eventLoop.scheduleTask(in: limit) {
            let (handler, context) = loopBound.value
            handler.stalled(context: context)
        }
    }

    private func stop() {
        watch?.cancel()
        watch = nil
    }

    private func stalled(context: ChannelHandlerContext) {
        watch = nil
        guard !answering, context.channel.isActive else { return }
        let nanoseconds = limit.nanoseconds
        let waited = nanoseconds % 1_000_000_000 == 0 ? "\(nanoseconds / 1_000_000_000) s" : "\(nanoseconds / 1_000_000) ms"
        let refusal = DallyError(
            .bodyTimeout,
            "no byte of the request's body came for \(waited) (server.body_timeout); nothing of it was saved: send it again, without pausing")
        let body = (try? DocumentEncoder.encode(ErrorDocument(refusal))) ?? Array(#"{"error":{"code":"body_timeout"}}"#.utf8)
        let head = HTTPResponse(
            status: refusal.code.status,
            headerFields: [.contentType: "application/json", .contentLength: "\(body.count)", .connection: "close"])
        answering = true
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
