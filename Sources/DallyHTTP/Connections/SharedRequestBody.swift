import Hummingbird
import NIOCore

/// A request body read through one iterator by the handler and then by
/// ``ErrorMiddleware``, which drops what the handler left.
///
/// `@unchecked Sendable`: the handler and the middleware read it one after the other, never at
/// once (the middleware reads only after the handler returned).
final class SharedRequestBody: AsyncSequence, @unchecked Sendable {
    typealias Element = ByteBuffer

    struct AsyncIterator: AsyncIteratorProtocol {
        let shared: SharedRequestBody

        mutating func next() async throws -> ByteBuffer? { try await shared.next() }
    }

    private let body: RequestBody
    private var iterator: RequestBody.AsyncIterator?
    private var finished = false

    init(_ body: RequestBody) { self.body = body }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(shared: self) }

    private func next() async throws -> ByteBuffer? {
        guard !finished else { return nil }
        var iterator = self.iterator ?? body.makeAsyncIterator()
        do {
            let part = try await iterator.next()
            self.iterator = iterator
            if part == nil { finished = true }
            return part
        } catch {
            // A body cut mid-way (its connection dropped) has nothing more to give, and its
            // iterator may not be made a second time: the drain after the handler must stop.
            finished = true
            throw error
        }
    }

    /// How a drain ended.
    enum Drained {
        /// The body was read to its end.
        case ended
        /// More than the limit was left: the answer goes before the rest is read, and the
        /// connection closes after it.
        case tooLong
        /// The body broke off (its client closed its side mid-body): nothing more comes, and
        /// the answer can still go out on the connection's open half.
        case brokenOff
    }

    /// Reads and drops the rest of the body, at most `limit` bytes.
    func drain(upTo limit: Int) async -> Drained {
        var dropped = 0
        do {
            while let part = try await next() {
                dropped += part.readableBytes
                if dropped > limit { return .tooLong }
            }
            return .ended
        } catch {
            return .brokenOff
        }
    }
}
