/// Deterministic test data: SplitMix64 from a seed, so every run sees the same bytes.
struct SeededBytes {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
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

    /// `count` random bytes from `seed`.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededBytes(seed: seed)
        return generator.bytes(count)
    }
}
