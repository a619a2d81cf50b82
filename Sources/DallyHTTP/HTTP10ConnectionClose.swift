import NIOCore
import NIOHTTP1

/// Marks an HTTP/1.0 request that does not ask to keep its connection (`Connection:
/// keep-alive`) with `Connection: close`, so that the connection is closed once it is answered,
/// as HTTP/1.0 expects.
///
/// Hummingbird sees requests as HTTP types, which carry no version: it kept an HTTP/1.0
/// client's connection open after the answer, and a client that reads to the end of the
/// connection (as HTTP/1.0 allows) waited for the keep-alive timeout. Placed before the
/// conversion to HTTP types (``DallyHTTPChannel``).
final class HTTP10ConnectionClose: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), head.version == .http1_0, !head.isKeepAlive else {
            context.fireChannelRead(data)
            return
        }
        head.headers.replaceOrAdd(name: "connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
