import HummingbirdCore
import Logging
import NIOCore
import NIOSSL

/// HTTP over TLS whose certificate can change while the server runs: each new connection
/// takes the context ``ServerCertificates`` holds at that moment. Modeled on HummingbirdTLS's
/// `TLSChannel`, which fixes its context when the server starts.
struct ReloadingTLSChannel<Base: ServerChildChannel & HTTPChannelHandler>: ServerChildChannel, HTTPChannelHandler {
    typealias Value = Base.Value

    let base: Base
    let certificates: ServerCertificates

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let context = certificates.context
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(PlainRequestOnTLSPort(), NIOSSLServerHandler(context: context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }

    var responder: HTTPChannelHandler.Responder { base.responder }
}

extension HTTPServerBuilder {
    /// Dally's HTTP/1.1 server: `Expect: 100-continue` answered at once
    /// (``ExpectContinueHandler``), a request that is not valid HTTP told why in JSON
    /// (``UnreadableRequestAnswer``), a `CONNECT`, a second `Host` or a transfer coding besides
    /// chunked refused in JSON (``RefusedRequestHead``), an HTTP/1.0 connection closed after its
    /// answer unless it asked to be kept, and then told so (``HTTP10Connections``), a connection with no
    /// request under way for `keepaliveTimeout` closed, a body that stops coming for
    /// `bodyTimeout` answered `408` (``StalledBodyAnswer``), over TLS when `tls` is given (a
    /// plain request there answered `400 tls_required`, ``PlainRequestOnTLSPort``).
    public static func dally(tls: ServerCertificates?, keepaliveTimeout: Duration, bodyTimeout: Duration = .seconds(60))
        -> HTTPServerBuilder
    {
        HTTPServerBuilder { responder in
            let http = DallyHTTPChannel(
                base: HTTP1Channel(
                    responder: responder,
                    configuration: .init(
                        additionalChannelHandlers: [
                            ExpectContinueHandler(), UnreadableRequestAnswer(), RefusedRequestHead(),
                            StalledBodyAnswer(limit: TimeAmount(bodyTimeout)),
                        ],
                        idleTimeout: TimeAmount(keepaliveTimeout))))
            guard let tls else { return http }
            return ReloadingTLSChannel(base: http, certificates: tls)
        }
    }
}
