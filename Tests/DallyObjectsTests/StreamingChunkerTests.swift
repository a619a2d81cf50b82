import DallyTestSupport
import Testing

@testable import DallyObjects

@Suite("StreamingChunker")
struct StreamingChunkerTests {
    /// Small sizes so that a few hundred KiB make many chunks.
    static let small = ChunkingParameters.fastCDC(average: 4096)
    static let data = SeededBytes.bytes(600_000, seed: 1)

    /// The chunks of `bytes` fed in pieces of `piece` bytes.
    static func chunks(_ bytes: [UInt8], _ parameters: ChunkingParameters, piece: Int) -> [[UInt8]] {
        var chunker = StreamingChunker(parameters)
        var out: [[UInt8]] = []
        bytes.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(all.count, offset + piece)
                chunker.append(UnsafeRawBufferPointer(rebasing: all[offset..<end])) { out.append(Array($0)) }
                offset = end
            }
        }
        chunker.finish { out.append(Array($0)) }
        return out
    }

    @Test("boundaries do not depend on how the input is split", arguments: [1, 7, 4095, 65536, Int.max])
    func splitIndependent(piece: Int) {
        for parameters in [Self.small, .fixed(size: 5000), ChunkingParameters(method: .fastCDC, minimum: 64, average: 1000, maximum: 3000)] {
            let whole = StreamingChunker.boundaries(of: Self.data, parameters: parameters)
            let pieces = Self.chunks(Self.data, parameters, piece: min(piece, Self.data.count))
            #expect(pieces.map(\.count) == whole)
            #expect(Array(pieces.joined()) == Self.data)
        }
    }

    @Test("FastCDC chunks respect minimum and maximum; only the last may be short")
    func fastCDCBounds() {
        let parameters = ChunkingParameters(method: .fastCDC, minimum: 1024, average: 4096, maximum: 8192)
        let lengths = StreamingChunker.boundaries(of: Self.data, parameters: parameters)
        #expect(lengths.reduce(0, +) == Self.data.count)
        #expect(lengths.dropLast().allSatisfy { (1024...8192).contains($0) })
        #expect((1...8192).contains(lengths.last ?? 0))
        // Content-defined: the sizes vary, and average out near the target.
        #expect(Set(lengths).count > lengths.count / 2)
        let mean = Double(Self.data.count) / Double(lengths.count)
        #expect(mean > 3000 && mean < 6000)
    }

    @Test("Constant input makes equal chunks within the bounds")
    func constantInput() {
        let parameters = ChunkingParameters(method: .fastCDC, minimum: 100, average: 400, maximum: 1000)
        let lengths = StreamingChunker.boundaries(of: [UInt8](repeating: 0, count: 3500), parameters: parameters)
        #expect(lengths.reduce(0, +) == 3500)
        // The hash restarts at every chunk, so a run of one value is cut the same way each time.
        #expect(Set(lengths.dropLast()).count == 1)
        #expect(lengths.allSatisfy { $0 <= 1000 })
        #expect(lengths.dropLast().allSatisfy { $0 >= 100 })
    }

    @Test("Fixed chunks have exactly the size; the last holds the rest")
    func fixedSizes() {
        #expect(StreamingChunker.boundaries(of: Self.data, parameters: .fixed(size: 100_000)) == Array(repeating: 100_000, count: 6))
        #expect(StreamingChunker.boundaries(of: Array(Self.data.prefix(250_001)), parameters: .fixed(size: 100_000)) == [100_000, 100_000, 50_001])
    }

    @Test("Empty input makes no chunk")
    func empty() {
        #expect(StreamingChunker.boundaries(of: [], parameters: Self.small) == [])
        #expect(StreamingChunker.boundaries(of: [], parameters: .fixed(size: 10)) == [])
        var chunker = StreamingChunker(Self.small)
        var emitted = 0
        chunker.append(UnsafeRawBufferPointer(start: nil, count: 0)) { _ in emitted += 1 }
        chunker.finish { _ in emitted += 1 }
        #expect(emitted == 0)
    }

    @Test("A stream of exactly `maximum` bytes is one or more whole chunks, none empty")
    func exactlyMaximum() {
        let parameters = ChunkingParameters(method: .fastCDC, minimum: 16_384, average: 65_536, maximum: 65_536)
        let lengths = StreamingChunker.boundaries(of: Array(Self.data.prefix(65_536)), parameters: parameters)
        #expect(lengths.reduce(0, +) == 65_536)
        #expect(lengths.allSatisfy { $0 > 0 && $0 <= 65_536 })
        // With no content boundary before it (minimum = maximum), exactly one chunk, emitted by append.
        let forced = ChunkingParameters(method: .fastCDC, minimum: 65_536, average: 65_536, maximum: 65_536)
        var chunker = StreamingChunker(forced)
        var fromAppend: [Int] = []
        var fromFinish: [Int] = []
        Self.data.prefix(65_536).withUnsafeBytes { chunker.append($0) { fromAppend.append($0.count) } }
        chunker.finish { fromFinish.append($0.count) }
        #expect(fromAppend == [65_536])
        #expect(fromFinish == [])
    }

    @Test("An insert in the middle changes only the chunks near it (FastCDC), all after it (fixed)")
    func insertIsLocal() {
        var edited = Self.data
        edited.insert(contentsOf: SeededBytes.bytes(1000, seed: 2), at: 300_000)
        func chunkSet(_ bytes: [UInt8], _ parameters: ChunkingParameters) -> (all: [[UInt8]], set: Set<[UInt8]>) {
            let chunks = Self.chunks(bytes, parameters, piece: Int.max)
            return (chunks, Set(chunks))
        }
        let before = chunkSet(Self.data, Self.small)
        let after = chunkSet(edited, Self.small)
        let new = after.all.filter { !before.set.contains($0) }
        #expect(new.count <= 3)
        #expect(new.map(\.count).reduce(0, +) < 3 * 16_384)

        let fixedBefore = chunkSet(Self.data, .fixed(size: 4096))
        let fixedNew = chunkSet(edited, .fixed(size: 4096)).all.filter { !fixedBefore.set.contains($0) }
        #expect(fixedNew.count > 70)
    }

    @Test("Parameters out of range are clamped, never a crash")
    func clamped() {
        let odd = ChunkingParameters(method: .fastCDC, minimum: -5, average: 0, maximum: 0)
        #expect(StreamingChunker.boundaries(of: [1, 2, 3], parameters: odd) == [1, 1, 1])
        let huge = ChunkingParameters(method: .fixed, minimum: 0, average: Int.max, maximum: 0)
        #expect(StreamingChunker.boundaries(of: [1, 2, 3], parameters: huge) == [3])
        #expect(throws: (any Error).self) { try odd.validate() }
        #expect(throws: (any Error).self) { try ChunkingParameters.fastCDC(average: 8 << 20).validate() }
        #expect((try? ChunkingParameters.default.validate()) != nil)
    }

    @Test("The mask width follows the average")
    func masks() {
        #expect(StreamingChunker.log2Rounded(1 << 20) == 20)
        #expect(StreamingChunker.log2Rounded(3 << 19) == 21)
        #expect(StreamingChunker.log2Rounded(1) == 0)
        #expect(StreamingChunker.topBits(0) == 0)
        #expect(StreamingChunker.topBits(2) == 0xC000_0000_0000_0000)
    }
}
