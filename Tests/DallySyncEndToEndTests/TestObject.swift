import DallyTestSupport
import DallyObjects
import Foundation
import NIOCore

typealias TestObject = SyntheticObject

extension SyntheticObject {
    /// The SHA-256 and length of the whole object.
    var digest: StreamDigest {
        var digest = StreamDigest()
        var offset = 0
        while offset < size {
            let count = min(Self.pieceBytes, size - offset)
            digest.update(ByteBuffer(bytes: bytes(at: offset, count: count)))
            offset += count
        }
        return digest
    }
}

/// The SHA-256 and length of a stream.
struct StreamDigest: Equatable, CustomStringConvertible {
    private var hasher = StreamingHash()
    private(set) var count = 0

    mutating func update(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { hasher.update($0) }
        count += buffer.readableBytes
    }

    var hash: ContentHash { hasher.finalize() }

    static func == (lhs: StreamDigest, rhs: StreamDigest) -> Bool { lhs.count == rhs.count && lhs.hash == rhs.hash }

    var description: String { "\(count) bytes, sha256 \(hash)" }
}
