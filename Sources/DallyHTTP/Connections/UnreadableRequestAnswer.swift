import DallyCore
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request the HTTP parser cannot read with Dally's JSON error (`400 bad_request`
/// saying what was wrong, or `431 headers_too_large`), where Hummingbird answers an empty `400`.
///
/// curl sends a URL's characters as typed, so `curl http://…/rows/café` reaches the server
/// with raw UTF-8 in its request line, which HTTP does not allow; an unknown method (`FOO`)
/// or a header with a forbidden character is refused the same way. The client is told why,
/// in the format of every other error, and the connection is closed (the parser cannot find
/// where the next request would begin).
///
/// Only between requests: a parse error in the middle of a request (a bad chunk size) comes
/// after its head reached the routes, which answer it, and is passed on as before.
///
/// ```swift
/// HTTP1Channel(responder: responder, configuration: .init(additionalChannelHandlers: [UnreadableRequestAnswer()]))
/// ```
public final class UnreadableRequestAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = HTTPRequestPart
    public typealias InboundOut = HTTPRequestPart
    public typealias OutboundIn = HTTPResponsePart
    public typealias OutboundOut = HTTPResponsePart

    /// Requests whose head arrived and whose answer has not ended.
    private var unanswered = 0

    public init() {}

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { unanswered += 1 }
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { unanswered = max(0, unanswered - 1) }
        context.write(data, promise: promise)
    }

    public func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError, unanswered == 0 else {
            context.fireErrorCaught(error)
            return
        }
        // Not passed on: Hummingbird would write its own empty 400 after this one. Closing the
        // connection once the answer is out ends Hummingbird's read loop.
        ClosingAnswer.write(Self.refusal(for: error), context: context)
    }

    /// `headers_too_large` (431) for a head over the parser's bounds, else `bad_request`.
    static func refusal(for error: HTTPParserError) -> DallyError {
        DallyError(error == .headerOverflow ? .headersTooLarge : .badRequest, message(for: error))
    }

    static func message(for error: HTTPParserError) -> String {
        let what =
            switch error {
            case .invalidMethod: "the method is not one HTTP knows"
            case .invalidURL, .invalidPath, .invalidQueryString, .invalidFragment, .invalidHost, .invalidPort:
                "the request target is not a valid URL path (percent-encode spaces and non-ASCII characters)"
            case .invalidHeaderToken, .invalidCharactersUsed: "a header holds a character HTTP does not allow"
            case .headerOverflow: "the request line and headers are too large"
            case .invalidContentLength, .unexpectedContentLength: "the Content-Length is not valid"
            case .invalidChunkSize: "a chunk size of the chunked body is not valid"
            case .invalidVersion: "the HTTP version is not valid"
            case .invalidEOFState: "the connection's input ended before the body its head announced (Content-Length or chunks)"
            // What llhttp reports and NIO has no case for: mostly a Transfer-Encoding that does
            // not end in chunked, or one beside a Content-Length (a request smuggling's shape).
            case .unknown:
                "the body's framing is not valid (Transfer-Encoding must end in chunked and not come with a Content-Length; lines end in CRLF)"
            default: "\(error)"
            }
        return "the request could not be read as HTTP/1.1: \(what)"
    }
}
