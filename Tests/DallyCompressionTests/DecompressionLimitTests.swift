@testable import DallyCompression
import Testing

@Suite("Decompressor limits")
struct DecompressionLimitTests {
    /// Sizes around the decoders' step sizes (64 KiB for zlib, 128 KiB for zstd).
    static let sizes = [1, 1_000, 65_535, 65_536, 65_537, 131_072, 131_073, 300_000]

    /// Every way a body of `data` can reach the decoder.
    static func encodings(of data: [UInt8]) throws -> [(ContentCoding, [UInt8])] {
        [
            (.zstd, try Compressor.compress(data, coding: .zstd, level: 3)),
            (.zstd, try TestData.zstdWithoutContentSize(data)),
            (.deflate, try Compressor.compress(data, coding: .deflate, level: 6)),
            (.identity, data),
        ]
    }

    @Test(arguments: sizes)
    func exactlyTheLimitIsAcceptedAndOneByteMoreIsNot(_ size: Int) throws {
        let data = TestData.mixed(count: size, seed: UInt64(size))
        for (coding, body) in try Self.encodings(of: data) {
            #expect(try Decompressor.decompress(body, coding: coding, maxOutput: size) == data)
            #expect(try Decompressor.decompress(body, coding: coding, maxOutput: size + 1) == data)
            #expect(throws: DecompressionError.tooLarge(limit: size - 1)) {
                try Decompressor.decompress(body, coding: coding, maxOutput: size - 1)
            }
        }
    }

    @Test func emptyBodyFitsALimitOfZero() throws {
        for (coding, body) in try Self.encodings(of: []) {
            #expect(try Decompressor.decompress(body, coding: coding, maxOutput: 0) == [])
        }
        #expect(throws: DecompressionError.tooLarge(limit: 0)) {
            try Decompressor.decompress([1], coding: .identity, maxOutput: 0)
        }
        #expect(throws: DecompressionError.tooLarge(limit: 0)) {
            try Decompressor.decompress([1], coding: .identity, maxOutput: -5)
        }
    }

    @Test(arguments: [ContentCoding.zstd, .deflate])
    func bombConstructionIsAValidStream(_ coding: ContentCoding) throws {
        // The same construction as the gigabyte bomb, small enough to decode in full.
        let bomb = try TestData.zeroBomb(coding, mebibytes: 5)
        let decoded = try Decompressor.decompress(bomb, coding: coding, maxOutput: 5 << 20)
        #expect(decoded.count == 5 << 20)
        #expect(decoded.allSatisfy { $0 == 0 })
        // Growth is capped at the limit, not left to Array's doubling (which would reach 8 MiB).
        #expect(decoded.capacity < (5 << 20) + 64 * 1024)
    }

    @Test(arguments: [ContentCoding.zstd, .deflate])
    func gigabyteBombIsRefusedAtTheLimit(_ coding: ContentCoding) throws {
        let bomb = try TestData.zeroBomb(coding, mebibytes: 1_024)
        // 1 GiB of zeros in about 30 KB (zstd) or 1 MB (deflate, whose ratio tops out near 1000:1).
        #expect(bomb.count < 1_100_000)
        for limit in [64 << 20, 1 << 20, 0] {
            #expect(throws: DecompressionError.tooLarge(limit: limit)) {
                try Decompressor.decompress(bomb, coding: coding, maxOutput: limit)
            }
        }
    }

    @Test func concatenatedZstdFramesCountTowardsOneLimit() throws {
        // Each frame declares 1 MiB, under the limit: only the running total can refuse them.
        let frame = try Compressor.compress([UInt8](repeating: 7, count: 1 << 20), coding: .zstd, level: 1)
        let body = Array([[UInt8]](repeating: frame, count: 8).joined())
        #expect(try Decompressor.decompress(body, coding: .zstd, maxOutput: 8 << 20).count == 8 << 20)
        #expect(throws: DecompressionError.tooLarge(limit: (8 << 20) - 1)) {
            try Decompressor.decompress(body, coding: .zstd, maxOutput: (8 << 20) - 1)
        }
    }

    @Test func zstdDeclaredSizeOverTheLimitIsRefusedBeforeDecoding() throws {
        // A header that declares 2 MiB followed by nothing: refused on the declaration alone.
        let frame = try Compressor.compress([UInt8](repeating: 0, count: 2 << 20), coding: .zstd, level: 1)
        let header = Array(frame.prefix(18))
        #expect(throws: DecompressionError.tooLarge(limit: 1 << 20)) {
            try Decompressor.decompress(header, coding: .zstd, maxOutput: 1 << 20)
        }
        let truncated = try #require(throws: DecompressionError.self) {
            try Decompressor.decompress(header, coding: .zstd, maxOutput: 4 << 20)
        }
        #expect(truncated.isCorrupt)
    }
}
