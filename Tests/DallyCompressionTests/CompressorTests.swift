import DallyCompression
import Testing

@Suite("Compressor")
struct CompressorTests {
    static let levels: [(ContentCoding, Int)] = [
        (.zstd, -7), (.zstd, -1), (.zstd, 1), (.zstd, 3), (.zstd, 19),
        (.deflate, 0), (.deflate, 1), (.deflate, 6), (.deflate, 9),
        (.identity, 0),
    ]

    @Test(arguments: levels)
    func roundTripsSmallInputs(_ coding: ContentCoding, _ level: Int) throws {
        for input in [[], [0x42], Array("a".utf8) + [0, 255], TestData.mixed(count: 5_000)] as [[UInt8]] {
            let compressed = try Compressor.compress(input, coding: coding, level: level)
            let restored = try Decompressor.decompress(compressed, coding: coding, maxOutput: input.count)
            #expect(restored == input)
        }
    }

    @Test(arguments: [
        (ContentCoding.zstd, -1), (.zstd, 3), (.zstd, 9),
        (.deflate, 0), (.deflate, 1), (.deflate, 6), (.deflate, 9),
        (.identity, 0),
    ])
    func roundTripsTenMegabytes(_ coding: ContentCoding, _ level: Int) throws {
        let input = TestData.tenMegabytes
        let compressed = try Compressor.compress(input, coding: coding, level: level)
        if coding != .identity && level != 0 {
            #expect(compressed.count < input.count * 3 / 4)
        }
        let restored = try Decompressor.decompress(compressed, coding: coding, maxOutput: input.count)
        #expect(restored.count == input.count)
        #expect(restored == input)
    }

    @Test func pointerOverloadMatchesArrayOverload() throws {
        let input = TestData.mixed(count: 20_000)
        for coding in ContentCoding.allCases {
            let level = Compressor.defaultLevel(for: coding)
            let viaPointer = try input.withUnsafeBytes { try Compressor.compress($0, coding: coding, level: level) }
            #expect(viaPointer == (try Compressor.compress(input, coding: coding, level: level)))
            let restored = try viaPointer.withUnsafeBytes {
                try Decompressor.decompress($0, coding: coding, maxOutput: input.count)
            }
            #expect(restored == input)
        }
    }

    @Test func repetitiveJSONCompressesWell() throws {
        let json = TestData.jsonRecords(2_000)
        let zstd = try Compressor.compress(json, coding: .zstd, level: 3)
        let deflate = try Compressor.compress(json, coding: .deflate, level: 6)
        #expect(json.count > 150_000)
        #expect(zstd.count * 10 < json.count)
        #expect(deflate.count * 6 < json.count)
        // zstd at its default beats deflate at its default here, the reason it is preferred.
        #expect(zstd.count < deflate.count)
        let fast = try Compressor.compress(json, coding: .zstd, level: -5)
        let strong = try Compressor.compress(json, coding: .zstd, level: 19)
        #expect(strong.count <= zstd.count && zstd.count < fast.count)
    }

    @Test func zstdOutputIsAFrameAndDeflateOutputIsTheZlibFormat() throws {
        let input = Array("hello, dally".utf8)
        let zstd = try Compressor.compress(input, coding: .zstd, level: 3)
        #expect(Array(zstd.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
        let deflate = try Compressor.compress(input, coding: .deflate, level: 6)
        #expect(deflate.count >= 6)
        // RFC 1950: CM 8 (deflate) with a 32 KiB window, header check, no preset dictionary.
        #expect(deflate.first == 0x78)
        #expect((Int(deflate[0]) * 256 + Int(deflate[1])) % 31 == 0)
        #expect(deflate[1] & 0x20 == 0)
        #expect(try Compressor.compress(input, coding: .identity, level: 12_345) == input)
    }

    @Test(arguments: [
        (ContentCoding.zstd, 0), (.zstd, 20), (.zstd, 22), (.zstd, -200_000), (.zstd, Int.min), (.zstd, Int.max),
        (.deflate, -1), (.deflate, 10), (.deflate, Int.min), (.deflate, Int.max),
    ])
    func rejectsLevelsTheCodingDoesNotHave(_ coding: ContentCoding, _ level: Int) {
        #expect(throws: CompressionError.invalidLevel(level, coding: coding)) {
            try Compressor.compress([1, 2, 3], coding: coding, level: level)
        }
    }

    @Test func defaultLevelsAreValid() throws {
        for coding in ContentCoding.allCases {
            let level = Compressor.defaultLevel(for: coding)
            #expect(try Compressor.compress([7], coding: coding, level: level).isEmpty == false)
        }
    }
}
