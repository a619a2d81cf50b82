import NIOCore

/// A request body handed to the HTTP client a slice at a time, each slice counted as it is
/// taken: the client asks for the next only when its connection can take more, so the count
/// follows the link (within a buffer's worth) rather than jumping to the whole body at once.
struct BodyFrames: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// Small enough that a 2 kbit/s link takes a slice in seconds, large enough that a fast
    /// link is not slowed by per-slice work.
    static let sliceBytes = 4_096

    let body: ByteBuffer
    let progress: TransferProgress
    let elapsed: @Sendable () -> Duration

    struct AsyncIterator: AsyncIteratorProtocol {
        var rest: ByteBuffer
        let progress: TransferProgress
        let elapsed: @Sendable () -> Duration

        mutating func next() async -> ByteBuffer? {
            guard rest.readableBytes > 0, let slice = rest.readSlice(length: Swift.min(rest.readableBytes, BodyFrames.sliceBytes))
            else { return nil }
            progress.handed(slice.readableBytes, at: elapsed())
            return slice
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(rest: body, progress: progress, elapsed: elapsed)
    }
}
