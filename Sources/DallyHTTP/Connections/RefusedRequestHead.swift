import DallyCore
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers, with Dally's JSON error, the request heads no route may see, and closes the
/// connection:
///
/// - `CONNECT` (`405 method_not_allowed`: the servers are not proxies). Left to the routes,
///   the answer never arrived whole: NIO's HTTP encoder frames every answer to `CONNECT` as a
///   tunnel's (RFC 9110 §9.3.6 says only a 2xx one is), without length or body, so a client
///   waited for the body until the keep-alive timeout closed the connection (75 s).
/// - More than one `Host` header (`400 bad_request`), which RFC 9112 §3.2 says a server MUST
///   refuse: a proxy in front that read another of them than the server does routes the
///   request by a host the server never saw. It was served as if the first were the only one.
/// - A transfer coding besides `chunked` (`Transfer-Encoding: gzip, chunked`: `415
///   unsupported_encoding`). NIO's parser took the chunks and ignored the gzip, so the route
///   read compressed bytes as JSON and answered "invalid JSON"; compression is the
///   `Content-Encoding`'s.
///
/// The answer is written below the encoder, framed as any other, and the rest of the
/// connection's input is dropped.
///
/// ```swift
/// HTTP1Channel(responder: responder, configuration: .init(additionalChannelHandlers: [RefusedRequestHead()]))
/// ```
public final class RefusedRequestHead: ChannelInboundHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart

    /// The methods some route of the gateway or the cloud takes.
    static let allowed = "DELETE, GET, HEAD, PATCH, POST, PUT"
    static let connectAnswer = ClosingAnswer.bytes(
        DallyError(.methodNotAllowed, "CONNECT is not allowed: this server is not a proxy; it takes \(allowed)"),
        headers: [("Allow", allowed)])
    static let hostsAnswer = ClosingAnswer.bytes(
        DallyError(.badRequest, "the request has more than one Host header; send one (RFC 9112 §3.2)", field: "Host"))
    static func codingAnswer(_ codings: String) -> [UInt8] {
        ClosingAnswer.bytes(
            DallyError(
                .unsupportedEncoding,
                "Transfer-Encoding '\(codings.prefix(80))' is not supported: send the body chunked or with a Content-Length, compressed with Content-Encoding (zstd or deflate) if at all",
                field: "Transfer-Encoding"))
    }
    /// The header NIO's conversion leaves among the fields once the first `Host` became the
    /// request's authority: present only when the request had another.
    static let host = HTTPField.Name("Host")

    /// Set once a request was refused: nothing after it is read.
    private var refused = false

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard case .head(let head) = unwrapInboundIn(data), let answer = Self.answer(to: head) else {
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
        encoder.writeAndFlush(NIOAny(ByteBuffer(bytes: answer))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// The refusal `head` gets, nil for a head the routes may see.
    static func answer(to head: HTTPRequest) -> [UInt8]? {
        if head.method == .connect { return connectAnswer }
        if let host, head.headerFields.contains(host) { return hostsAnswer }
        if let codings = head.headerFields[.transferEncoding],
            codings.split(separator: ",").contains(where: { $0.filter { $0 != " " && $0 != "\t" }.lowercased() != "chunked" })
        {
            return codingAnswer(codings)
        }
        return nil
    }
}
