import NIOCore

/// One encoded changes page as the feed's ``SharedLoads`` shares it, with what a filtered long-poll
/// needs to know without decoding it: whether it holds an entry, and its `next_since`.
struct CachedPage: Sendable {
    var body: ByteBuffer
    /// The page's cursor for the next read: a filtered read that found nothing parks again from it.
    var nextSince: Int64
    var isEmpty: Bool
}
