import DallyCore
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The JSON answer a channel handler writes itself, ahead of the routes, to a request it ends:
/// one the parser cannot read (``UnreadableRequestAnswer``), a body that stopped coming
/// (``StalledBodyAnswer``). The connection is closed once the answer is out.
///
/// ```swift
/// ClosingAnswer.write(DallyError(.bodyTimeout, "no byte of the body came for 60 s"), context: context)
/// ```
enum ClosingAnswer {
    static func write(_ refusal: DallyError, context: ChannelHandlerContext) {
        let body = body(of: refusal)
        let head = HTTPResponse(
            status: refusal.code.status,
            headerFields: [.contentType: "application/json", .contentLength: "\(body.count)", .connection: "close"])
        context.write(NIOAny(HTTPResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPResponsePart.body(ByteBuffer(bytes: body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// The refusal's JSON document.
    static func body(of refusal: DallyError) -> [UInt8] {
        (try? DocumentEncoder.encode(ErrorDocument(refusal)))
            ?? Array(#"{"error":{"code":"\#(refusal.code.rawValue)"}}"#.utf8)
    }

    /// The whole answer, head and body, as it goes on the wire, for a handler that writes below
    /// the HTTP encoder (``PlainRequestOnTLSPort``, ``RefusedRequestHead``).
    static func bytes(_ refusal: DallyError, headers: [(String, String)] = []) -> [UInt8] {
        let body = body(of: refusal)
        let status = refusal.code.status
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nContent-Type: application/json\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }
}
