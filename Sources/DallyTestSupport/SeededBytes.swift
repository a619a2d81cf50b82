import DallyCore

/// Deterministic test data: the little-endian bytes of SplitMix64's words from a seed, so every
/// run sees the same bytes. Tests pin chunk boundaries cut from these bytes: never change how
/// they are made.
public struct SeededBytes: Sendable {
    private var random: SplitMix64

    /// Bytes that follow from `seed` alone.
    public init(seed: UInt64) { random = SplitMix64(seed: seed) }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 { random.next() }

    /// The next `count` bytes. A count that is not a multiple of 8 drops the rest of the last
    /// word, so pieces of a stream match one whole draw only when they are multiples of 8.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            var word = next()
            for _ in 0..<8 {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        out.removeLast(out.count - count)
        return out
    }

    /// `count` bytes from `seed`.
    public static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededBytes(seed: seed)
        return generator.bytes(count)
    }
}
