import DallyCore
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a `CONNECT` request with Dally's JSON error (`405 method_not_allowed`: the servers
/// are not proxies) and closes the connection.
///
/// Left to the routes, the answer never arrived whole: NIO's HTTP encoder frames every answer
/// to `CONNECT` as a tunnel's (RFC 9110 §9.3.6 says only a 2xx one is), without length or
/// body, so a client waited for the body until the keep-alive timeout closed the connection
/// (75 s). This handler writes its answer below that encoder, framed as any other, and drops
/// the rest of the connection's input.
///
/// ```swift
/// HTTP1Channel(responder: responder, configuration: .init(additionalChannelHandlers: [ConnectRequestAnswer()]))
/// ```
public final class ConnectRequestAnswer: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart

    /// The methods some route of the gateway or the cloud takes.
    static let allowed = "DELETE, GET, HEAD, PATCH, POST, PUT"
    static let answer = ClosingAnswer.bytes(
        DallyError(.methodNotAllowed, "CONNECT is not allowed: this server is not a proxy; it takes \(allowed)"),
        headers: [("Allow", allowed)])

    /// Set once a CONNECT was refused: nothing after it is read.
    private var refused = false

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard case .head(let head) = unwrapInboundIn(data), head.method == .connect else {
            context.fireChannelRead(data)
            return
        }
        refused = true
        let channel = context.channel
        // Written from the encoder's place in the pipeline, the bytes go on to TLS or the socket
        // as they are.
        guard let encoder = try? context.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self) else {
            channel.close(promise: nil)
            return
        }
        encoder.writeAndFlush(NIOAny(ByteBuffer(bytes: Self.answer))).whenComplete { _ in channel.close(promise: nil) }
    }
}
