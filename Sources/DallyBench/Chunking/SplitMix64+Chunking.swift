import DallyCore
import ArgumentParser
import DallyObjects
import Foundation

/// The chunking benchmark's draws, on the module's seeded `SplitMix64` (its only source of
/// randomness, so every run edits the same places).
extension SplitMix64 {
    /// Uniform in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { buffer in
            var i = 0
            while i + 8 <= count {
                buffer.storeBytes(of: next(), toByteOffset: i, as: UInt64.self)
                i += 8
            }
            while i < count {
                buffer[i] = UInt8(truncatingIfNeeded: next())
                i += 1
            }
        }
        return out
    }
}
