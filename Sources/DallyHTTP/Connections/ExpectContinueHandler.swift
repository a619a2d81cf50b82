import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue` as soon as the request's head arrives.
///
/// curl (and other clients) send that header before a large body and wait up to a second for
/// the go-ahead; without it every object upload would start a second late. The handler says go
/// at once: whether the request will be refused is known only once the routes see it, and a
/// refused body is then drained or the connection closed (``ErrorMiddleware``).
///
/// ```swift
/// Application(router: router, server: .http1(additionalChannelHandlers: [ExpectContinueHandler()]))
/// ```
public final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundOut = HTTPResponsePart

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data),
            head.headerFields[.expect]?.lowercased() == "100-continue"
        {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
