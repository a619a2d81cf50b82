import DallyTestSupport
import Testing

@testable import DallyObjects

/// Boundaries decide which chunks of a new object match chunks already stored, so they must not
/// change between versions (see ``GearTable``). These figures were computed by an independent
/// Python transcription of the algorithm described on ``StreamingChunker``; if a test here fails,
/// the change breaks deduplication against every deployment's stored data.
@Suite("StreamingChunker stability")
struct StreamingChunkerStabilityTests {
    @Test("The gear table is the one from the fixed seed")
    func gearTable() {
        #expect(GearTable.values.count == 256)
        #expect(GearTable.values[0] == 0xDDD6_03BB_39ED_C01F)
        #expect(GearTable.values[255] == 0xEB0C_0924_250C_9C8B)
        #expect(GearTable.values.reduce(0, ^) == 0x684E_C176_BE6F_D92D)
    }

    @Test("FastCDC 4/16/64 KiB cuts 1 MiB of seeded bytes where it always has")
    func pinnedBoundaries() {
        let data = SeededBytes.bytes(1 << 20, seed: 42)
        let parameters = ChunkingParameters(method: .fastCDC, minimum: 4096, average: 16_384, maximum: 65_536)
        #expect(StreamingChunker.boundaries(of: data, parameters: parameters) == [
            16848, 19789, 19335, 19928, 19098, 21026, 17379, 18971, 19368, 6260, 23339, 7427, 18722, 8088, 17878,
            18095, 6563, 19863, 18108, 19265, 16743, 16436, 7677, 28486, 8757, 16600, 39635, 36197, 18040, 8022,
            16651, 8684, 17055, 33745, 19049, 23077, 16864, 17732, 17284, 10741, 19225, 24363, 21526, 17957, 16420,
            24205, 17253, 20757, 17891, 24204, 17905, 19297, 16854, 18772, 21365, 19579, 18178,
        ])
    }
}
