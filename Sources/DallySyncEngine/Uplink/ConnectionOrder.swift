/// Starts requests in the order they should take the uplink's connections.
///
/// The HTTP client's pool hands an open connection to the request queued first, and a new
/// connection costs a handshake's round trip before its first byte moves. On a long link the
/// request whose bytes fill the link (an object's chunk) should take the open one, and the small
/// ones started after it (an ask, the rows, a manifest) new ones. A request reaches the client
/// through the transfer watch's child tasks, so starting its task first does not queue it first:
/// the ask beside an object's first chunk took the open connection in 2 of 6 runs of a test,
/// and after a cut the resumed walk's manifest and second chunk took both open connections
/// while the first chunk, the larger, waited for a new one (docs/BENCHMARKS.md). ``start(_:)``
/// returns once the request is queued (the `queued` notice of ``TransferWatch``).
///
/// ```swift
/// let upload = await ConnectionOrder.start { queued in try await put(chunk, queued: queued) }
/// let answer = try await missingChunks(asking)   // queued after the chunk
/// ```
enum ConnectionOrder {
    /// Runs `body` in a task of its own and returns that task once `body` has called the notice
    /// it is given (its request is queued for a connection), or has ended.
    static func start<T: Sendable>(
        _ body: @escaping @Sendable (_ queued: @escaping @Sendable () -> Void) async throws -> T
    ) async -> Task<T, any Error> {
        let (queued, queuing) = AsyncStream<Void>.makeStream()
        let task = Task {
            defer { queuing.finish() }
            return try await body { queuing.finish() }
        }
        for await _ in queued {}
        return task
    }
}
