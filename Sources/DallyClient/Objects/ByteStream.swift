/// Bytes arriving piece by piece: a response body being read, a file being uploaded.
///
/// Each element is one piece as it came (usually a few KiB to a few hundred KiB), so a caller
/// that handles pieces one at a time holds at most one in memory, however large the whole.
/// One iterator per stream: a body can be read once.
///
/// For example:
/// ```swift
/// for try await piece in try await photos.objectStream(id: "p1", column: "image") {
///     try handle.write(contentsOf: piece)
/// }
/// ```
public struct ByteStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public typealias Failure = any Error

    private let makeNext: @Sendable () -> (() async throws -> [UInt8]?)

    /// A stream whose iterator calls what `makeNext` returns until it answers nil.
    ///
    /// For example, a transport wrapping another HTTP library's body:
    /// ```swift
    /// ByteStream { var iterator = body.makeAsyncIterator(); return { try await iterator.next() } }
    /// ```
    public init(_ makeNext: @escaping @Sendable () -> (() async throws -> [UInt8]?)) {
        self.makeNext = makeNext
    }

    /// A stream of the pieces of an `AsyncSequence` of byte arrays, in order.
    ///
    /// For example: `ByteStream(chunks)` where `chunks` is an `AsyncStream<[UInt8]>`.
    public init<Pieces: AsyncSequence & Sendable>(_ pieces: Pieces) where Pieces.Element == [UInt8] {
        self.init {
            let box = IteratorBox(pieces.makeAsyncIterator())
            return { try await box.next() }
        }
    }

    /// A stream of one piece (none when `bytes` is empty).
    public init(bytes: [UInt8]) {
        self.init {
            var given = bytes.isEmpty ? nil : bytes
            return {
                defer { given = nil }
                return given
            }
        }
    }

    public func makeAsyncIterator() -> Iterator { Iterator(pull: makeNext()) }

    /// Reads the whole stream into memory; throws ``DallyClientError/responseTooLarge(limit:)``
    /// past `limit` bytes.
    public func collect(upTo limit: Int) async throws -> [UInt8] {
        var all: [UInt8] = []
        for try await piece in self {
            guard all.count + piece.count <= limit else { throw DallyClientError.responseTooLarge(limit: limit) }
            all += piece
        }
        return all
    }

    /// Reads the stream's pieces in order; `next()` answers nil at the end.
    public struct Iterator: AsyncIteratorProtocol {
        let pull: () async throws -> [UInt8]?

        public mutating func next() async throws -> [UInt8]? { try await pull() }
    }
}
