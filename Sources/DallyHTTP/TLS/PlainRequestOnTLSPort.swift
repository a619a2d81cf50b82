import DallyCore
import NIOCore

/// Answers a plain-HTTP request sent to a port that speaks TLS with Dally's JSON error,
/// `400 tls_required`, in plain HTTP, and closes the connection: `curl http://gateway:8443/…`
/// is told to use `https://` where the TLS handler would drop the connection without a word.
///
/// It looks at the connection's first byte only. Every TLS connection begins with a handshake
/// record (`0x16`); a plain request begins with its method's first letter. Once the first byte
/// is seen the handler takes itself out of the pipeline, so TLS traffic pays one look a
/// connection.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandlers(PlainRequestOnTLSPort(), NIOSSLServerHandler(context: context))
/// ```
final class PlainRequestOnTLSPort: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let refusal = DallyError(
        .tlsRequired, "this port speaks HTTPS (TLS) only: send the request to https:// instead of http://")

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else {
            context.fireChannelRead(data)
            return
        }
        guard Self.beginsPlainRequest(first) else {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: Self.answer))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Whether `byte` can begin an HTTP/1 request line: an upper-case letter, the first of
    /// every method. A TLS record never begins so (its first byte is its content type, 20–24).
    static func beginsPlainRequest(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// The whole answer, head and JSON body, as it goes on the wire.
    static let answer = ClosingAnswer.bytes(refusal)
}
