import AsyncHTTPClient
import NIOCore
import Synchronization

/// What has arrived of an answer so far, kept as it arrives: when the transfer is cut part-way,
/// the bytes that did cross are still here for a `Range` resume (``PartialDownloads``).
///
/// ```swift
/// let tap = AnswerTap()
/// do { _ = try await watch.exchange(request, …, tap: tap) } catch { keep(tap.received) }
/// ```
final class AnswerTap: Sendable {
    private struct State {
        var response: HTTPClientResponse?
        var body = ByteBuffer()
    }

    private let state = Mutex(State())

    func head(_ response: HTTPClientResponse) {
        state.withLock { $0.response = response }
    }

    func append(_ piece: ByteBuffer) {
        state.withLock { _ = $0.body.writeImmutableBuffer(piece) }
    }

    /// The answer's head, if it arrived, and the body bytes read.
    var received: (response: HTTPClientResponse?, body: ByteBuffer) {
        state.withLock { ($0.response, $0.body) }
    }
}
