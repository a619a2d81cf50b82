import DallyCore

/// The 256 random 64-bit values FastCDC's gear hash adds, one per byte value.
///
/// Generated from a fixed seed by SplitMix64 (Steele, Lea & Flood 2014), so the table is the same
/// on every machine and in every version. **Never change the seed, the generator or how the
/// table is used**: chunk boundaries follow from this table, and boundaries decide which chunks
/// of a new object match chunks already stored on gateways and in the cloud. A different table
/// cuts every object differently, and the next upload of each edited object would be sent whole.
/// `StreamingChunkerStabilityTests` pins the table and some boundaries.
enum GearTable {
    /// "DALLYCDC" in ASCII.
    static let seed: UInt64 = 0x4441_4C4C_5943_4443

    static let values: [UInt64] = {
        var random = SplitMix64(seed: seed)
        return (0..<256).map { _ in random.next() }
    }()
}
