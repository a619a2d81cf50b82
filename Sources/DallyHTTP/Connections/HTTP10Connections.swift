import NIOCore
import NIOHTTP1

/// Keeps HTTP/1.0 connections as HTTP/1.0 expects: a request that does not ask to keep its
/// connection (`Connection: keep-alive`) is marked `Connection: close`, so that the connection
/// is closed once it is answered; the answer to one that does ask says `Connection:
/// keep-alive`, which an HTTP/1.0 client needs to reuse the connection.
///
/// Hummingbird sees requests as HTTP types, which carry no version: it kept an HTTP/1.0
/// client's connection open after the answer, and a client that reads to the end of the
/// connection (as HTTP/1.0 allows) waited for the keep-alive timeout; and it never said
/// keep-alive, so such a client opened a connection per request. Placed before the conversion
/// to HTTP types (``DallyHTTPChannel``).
final class HTTP10Connections: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// For each request whose answer has not started, in order (pipelined requests are
    /// answered in order): whether that answer must say `Connection: keep-alive`.
    private var keepAliveAnswers = CircularBuffer<Bool>()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let http10 = head.version == .http1_0
        keepAliveAnswers.append(http10 && head.isKeepAlive)
        guard http10, !head.isKeepAlive else {
            context.fireChannelRead(data)
            return
        }
        head.headers.replaceOrAdd(name: "connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // An informational head (100 Continue) is not the answer: the final one follows.
        guard case .head(var head) = unwrapOutboundIn(data), head.status.code >= 200,
            let keepAlive = keepAliveAnswers.popFirst()
        else {
            context.write(data, promise: promise)
            return
        }
        if keepAlive, !head.headers.contains(name: "connection") {
            head.headers.add(name: "connection", value: "keep-alive")
        }
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
