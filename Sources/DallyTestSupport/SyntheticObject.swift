import DallyCore
import DallyObjects
import Foundation
import NIOCore

/// A deterministic object of any size, made piece by piece so that a test never holds it
/// whole: seeded pseudo-random bytes (incompressible, like a photo), with optional regions
/// overwritten by other seeded bytes (an edit).
public struct SyntheticObject: Sendable {
    public let size: Int
    public let seed: UInt64
    /// Byte ranges whose content comes from another seed.
    public var edits: [(range: Range<Int>, seed: UInt64)] = []

    public init(size: Int, seed: UInt64, edits: [(range: Range<Int>, seed: UInt64)] = []) {
        self.size = size
        self.seed = seed
        self.edits = edits
    }

    public static let pieceBytes = 256 * 1024

    /// The bytes from `offset`, `count` of them.
    public func bytes(at offset: Int, count: Int) -> [UInt8] {
        var out = Self.seeded(at: offset, count: count, seed: seed)
        for edit in edits {
            let lower = max(edit.range.lowerBound, offset)
            let upper = min(edit.range.upperBound, offset + count)
            guard lower < upper else { continue }
            let replacement = Self.seeded(at: lower, count: upper - lower, seed: edit.seed)
            out.replaceSubrange((lower - offset)..<(upper - offset), with: replacement)
        }
        return out
    }

    /// Seeded pseudo-random bytes, addressable by position: byte p is byte p % 8 of a 64-bit
    /// mix of the seed and p / 8.
    public static func seeded(at offset: Int, count: Int, seed: UInt64) -> [UInt8] {
        let firstWord = offset / 8
        let lastWord = (offset + count + 7) / 8
        var words = [UInt64](repeating: 0, count: lastWord - firstWord)
        for i in words.indices {
            words[i] = SplitMix64.mix(seed &+ UInt64(firstWord + i) &* SplitMix64.gamma).littleEndian
        }
        return words.withUnsafeBytes { raw in
            let start = offset - firstWord * 8
            return Array(raw[start..<start + count])
        }
    }

    /// The object as a stream of buffers, each made when asked for.
    public func pieces() -> Pieces { Pieces(object: self) }

    public struct Pieces: AsyncSequence, Sendable {
        public typealias Element = ByteBuffer
        let object: SyntheticObject

        public struct AsyncIterator: AsyncIteratorProtocol {
            let object: SyntheticObject
            var offset = 0

            public mutating func next() async -> ByteBuffer? {
                guard offset < object.size else { return nil }
                let count = Swift.min(SyntheticObject.pieceBytes, object.size - offset)
                defer { offset += count }
                return ByteBuffer(bytes: object.bytes(at: offset, count: count))
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(object: object) }
    }

    /// The SHA-256 of the whole object, computed piece by piece.
    public var hash: ContentHash {
        var hasher = StreamingHash()
        var offset = 0
        while offset < size {
            let count = min(Self.pieceBytes, size - offset)
            hasher.update(bytes(at: offset, count: count))
            offset += count
        }
        return hasher.finalize()
    }
}

