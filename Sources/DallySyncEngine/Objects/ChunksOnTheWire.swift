/// The chunk uploads of one round of an object walk: started in manifest order and settled in
/// that order (the walk's progress is persisted as a prefix of the manifest), but counted
/// against the window as they land. When a later chunk lands first (after a cut, the one
/// resumed with less left to send), the next chunk starts at once instead of waiting behind
/// the earlier one with half the link idle.
///
/// ```swift
/// var wire = ChunksOnTheWire()
/// defer { wire.cancelAll() }
/// wire.start { try await put(chunkA) }
/// wire.start { try await put(chunkB) }
/// try await wire.awaitLanding()                       // either one
/// while let bytes = try await wire.settleIfLanded() { /* A's bytes, then B's if it landed */ }
/// ```
struct ChunksOnTheWire {
    /// Unsettled uploads, oldest first; the oldest is number `settled`.
    private var tasks: [Task<Int, any Error>] = []
    private var settled = 0
    /// Numbers of uploads that landed and are not settled yet.
    private var landed: Set<Int> = []
    private let landings: AsyncStream<Int>.Continuation
    private var landingIterator: AsyncStream<Int>.Iterator

    init() {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        landings = continuation
        landingIterator = stream.makeAsyncIterator()
    }

    /// Uploads started and not settled.
    var isEmpty: Bool { tasks.isEmpty }
    /// Uploads still on the wire (started, not landed).
    var going: Int { tasks.count - landed.count }

    /// Starts an upload; `body` returns the bytes it sent.
    mutating func start(_ body: @escaping @Sendable () async throws -> Int) {
        let number = settled + tasks.count
        tasks.append(
            Task { [landings] in
                defer { landings.yield(number) }
                return try await body()
            })
    }

    /// Takes over an upload started elsewhere (the first chunk sent beside the ask, or one
    /// started in connection order, ``ConnectionOrder``); cancelling this walk's uploads
    /// cancels it too.
    mutating func adopt(_ task: Task<Int, any Error>) {
        start { try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() } }
    }

    /// Waits until one more upload lands; throws at once when it failed.
    mutating func awaitLanding() async throws {
        guard let number = await landingIterator.next() else { throw CancellationError() }
        landed.insert(number)
        _ = try await tasks[number - settled].value
    }

    /// The oldest upload's bytes once it has landed; nil while it is still on the wire.
    mutating func settleIfLanded() async throws -> Int? {
        guard landed.contains(settled) else { return nil }
        return try await takeOldest()
    }

    /// The oldest upload's bytes, waiting for it to land.
    mutating func settleOldest() async throws -> Int {
        while !landed.contains(settled) { try await awaitLanding() }
        return try await takeOldest()
    }

    /// Settles the oldest upload, which has landed.
    private mutating func takeOldest() async throws -> Int {
        landed.remove(settled)
        settled += 1
        return try await tasks.removeFirst().value
    }

    func cancelAll() { tasks.forEach { $0.cancel() } }
}
