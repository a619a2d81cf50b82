import Hummingbird
import NIOCore

/// The per-request context of the gateway's routes: Hummingbird's core context plus the
/// connection's channel, on which a parked long-poll watches for its client leaving
/// (``DisconnectWatcher``).
public struct DallyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client connection.
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
