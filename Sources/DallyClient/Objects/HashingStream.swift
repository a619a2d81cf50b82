import DallyObjects
import Synchronization

/// A byte stream passed through while its SHA-256 is taken and its progress reported; with an
/// `expected` hash, the stream's end throws ``DallyClientError/hashMismatch(expected:received:)``
/// when the bytes do not have it.
final class HashingStream: Sendable {
    private struct State {
        var hash = StreamingHash()
        var result: String?
    }

    private let base: ByteStream
    private let total: Int64?
    private let progress: ProgressHandler?
    private let expected: String?
    private let state = Mutex(State())

    init(_ base: ByteStream, total: Int64?, progress: ProgressHandler?, expected: String? = nil) {
        self.base = base
        self.total = total
        self.progress = progress
        self.expected = expected
    }

    /// The bytes, hashed as they pass. Read once.
    var stream: ByteStream {
        ByteStream {
            let box = IteratorBox(self.base.makeAsyncIterator())
            return {
                guard let piece = try await box.next() else {
                    let received = self.state.withLock { state in
                        if let result = state.result { return result }
                        let result = state.hash.finalize().hex
                        state.result = result
                        return result
                    }
                    if let expected = self.expected, expected != received {
                        throw DallyClientError.hashMismatch(expected: expected, received: received)
                    }
                    return nil
                }
                let completed = self.state.withLock { state in
                    state.hash.update(piece)
                    return state.hash.count
                }
                self.progress?(TransferProgress(completed: completed, total: self.total))
                return piece
            }
        }
    }

    /// The hash of everything that passed, once the stream has ended; nil before.
    func finalHash() -> String? { state.withLock { $0.result } }
}
