/// SplitMix64 (Steele, Lea & Flood 2014): the one seedable generator behind every reproducible
/// choice in Dally — the chunker's gear table, the benchmarks' traces and workloads, and test data.
///
/// What it draws must be identical on every machine and every Swift release (the gear table's
/// values decide chunk boundaries; benchmark traces and tests pin figures), so nothing here goes
/// through `SystemRandomNumberGenerator` or the standard library's `random(in:using:)`, whose
/// way of turning words into bounded numbers is not a documented contract: the bounded draws
/// below are this file's own arithmetic.
///
/// For example:
/// ```swift
/// var random = SplitMix64(seed: 42)
/// let word = random.next()
/// let die = random.int(in: 1...6)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose draws follow from `seed` alone.
    public init(seed: UInt64) { state = seed }

    /// The golden-ratio increment added to the state before each draw.
    public static let gamma: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= Self.gamma
        return Self.mix(state)
    }

    /// SplitMix64's output function: a bijective mix of one 64-bit state. Exposed for callers
    /// that address random words by position (word `i` of seed `s` is `mix(s &+ i &* gamma)`)
    /// instead of drawing them in order.
    public static func mix(_ state: UInt64) -> UInt64 {
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform number in `0..<bound` (0 when `bound` is 0), by Lemire's multiply-and-reject
    /// method: unbiased, and the same on every platform.
    public mutating func below(_ bound: UInt64) -> UInt64 {
        guard bound > 0 else { return 0 }
        var product = next().multipliedFullWidth(by: bound)
        if product.low < bound {
            let threshold = (0 &- bound) % bound
            while product.low < threshold { product = next().multipliedFullWidth(by: bound) }
        }
        return product.high
    }

    /// A uniform integer in `range`.
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let span = UInt64(bitPattern: Int64(range.upperBound) &- Int64(range.lowerBound)) &+ 1
        // A span of 0 means the whole 64-bit range.
        let offset = span == 0 ? next() : below(span)
        return Int(Int64(range.lowerBound) &+ Int64(bitPattern: offset))
    }

    /// A uniform integer in `range`, for times and other 64-bit quantities.
    public mutating func int64(in range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(bitPattern: range.upperBound &- range.lowerBound) &+ 1
        let offset = span == 0 ? next() : below(span)
        return range.lowerBound &+ Int64(bitPattern: offset)
    }

    /// True with probability `percent` / 100.
    public mutating func chance(_ percent: Int) -> Bool {
        Int(below(100)) < percent
    }

    /// One element of a non-empty array.
    public mutating func pick<T>(_ elements: [T]) -> T {
        precondition(!elements.isEmpty, "pick from an empty array")
        return elements[Int(below(UInt64(elements.count)))]
    }
}
