import DallyCore
import DallyCompression
import Testing

@Suite("Decompressor input checks")
struct CorruptInputTests {
    /// "hello, dally" from the zstd command-line tool (no declared size, with a checksum).
    static let zstdFixture: [UInt8] = [
        0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x58, 0x61, 0x00, 0x00, 0x68, 0x65, 0x6C, 0x6C, 0x6F, 0x2C, 0x20,
        0x64, 0x61, 0x6C, 0x6C, 0x79, 0xDC, 0x4C, 0x0F, 0x09,
    ]
    /// "hello, dally" from Python's zlib.compress.
    static let zlibFixture: [UInt8] = [
        0x78, 0x9C, 0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0xD7, 0x51, 0x48, 0x49, 0xCC, 0xC9, 0xA9, 0x04, 0x00,
        0x1C, 0xC0, 0x04, 0x77,
    ]
    /// The same deflate data without the zlib wrapper (raw deflate), which HTTP's deflate is not.
    static let rawDeflate: [UInt8] = Array(zlibFixture[2..<16])
    /// "hello, dally" gzipped: a different coding, not to be mistaken for deflate.
    static let gzipFixture: [UInt8] = [
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0xD7,
        0x51, 0x48, 0x49, 0xCC, 0xC9, 0xA9, 0x04, 0x00, 0xF8, 0x0A, 0x8A, 0x4D, 0x0C, 0x00, 0x00, 0x00,
    ]

    static func corruptError(_ body: [UInt8], _ coding: ContentCoding) -> DecompressionError? {
        #expect(throws: DecompressionError.self) {
            try Decompressor.decompress(body, coding: coding, maxOutput: 1 << 24)
        }
    }

    @Test func decodesOtherImplementationsOutput() throws {
        let text = Array("hello, dally".utf8)
        #expect(try Decompressor.decompress(Self.zstdFixture, coding: .zstd, maxOutput: 100) == text)
        #expect(try Decompressor.decompress(Self.zlibFixture, coding: .deflate, maxOutput: 100) == text)
    }

    @Test(arguments: [ContentCoding.zstd, .deflate])
    func emptyBodyIsCorrupt(_ coding: ContentCoding) {
        #expect(Self.corruptError([], coding)?.isCorrupt == true)
    }

    @Test func emptyIdentityBodyIsEmpty() throws {
        #expect(try Decompressor.decompress([], coding: .identity, maxOutput: 10) == [])
    }

    @Test(arguments: [ContentCoding.zstd, .deflate])
    func truncatedStreamIsCorrupt(_ coding: ContentCoding) throws {
        let body = try Compressor.compress(TestData.mixed(count: 100_000), coding: coding, level: 3)
        for cut in [1, 2, 6, body.count / 2, body.count - 1] {
            let error = Self.corruptError(Array(body.prefix(cut)), coding)
            #expect(error?.isCorrupt == true, "cut at \(cut) of \(body.count)")
        }
    }

    @Test func truncatedStreamsAreCorruptEvenWhenTheOutputFillsTheLimit() throws {
        let data = TestData.mixed(count: 200_000)
        for coding in [ContentCoding.zstd, .deflate] {
            let body = try Compressor.compress(data, coding: coding, level: 3)
            let error = #expect(throws: DecompressionError.self) {
                try Decompressor.decompress(Array(body.dropLast()), coding: coding, maxOutput: data.count)
            }
            #expect(error?.isCorrupt == true)
        }
    }

    @Test(arguments: [ContentCoding.zstd, .deflate])
    func garbageIsCorrupt(_ coding: ContentCoding) {
        var random = SplitMix64(seed: 42)
        let noise = (0..<1_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        let bodies: [[UInt8]] = [
            noise, Array("hello, dally".utf8), [0], [0x78, 0x9C] + noise,
            // zstd magic and a header that declares no size (else noise could declare a huge
            // one, which is refused as .tooLarge before decoding), then noise.
            [0x28, 0xB5, 0x2F, 0xFD, 0x00] + noise,
            Self.gzipFixture, Self.rawDeflate,
            coding == .zstd ? Self.zlibFixture : Self.zstdFixture,
        ]
        for body in bodies {
            #expect(Self.corruptError(body, coding)?.isCorrupt == true, "\(body.prefix(8))")
        }
    }

    @Test func zstdChecksumMismatchIsCorrupt() {
        var body = Self.zstdFixture
        body[body.count - 1] ^= 0xFF
        #expect(Self.corruptError(body, .zstd)?.isCorrupt == true)
    }

    @Test func zlibPresetDictionaryIsRefused() {
        // FDICT set: the stream needs a dictionary the client cannot have agreed with us.
        let body: [UInt8] = [0x78, 0xBB, 0x00, 0x00, 0x00, 0x01, 0x03, 0x00]
        #expect(Self.corruptError(body, .deflate) == .corrupt("deflate: stream needs a preset dictionary"))
    }

    @Test func bytesAfterAZlibStreamAreCorrupt() throws {
        let body = try Compressor.compress(Array("some json".utf8), coding: .deflate, level: 6)
        for trailer in [[0], [0x0A], Array("garbage".utf8), body] as [[UInt8]] {
            let error = Self.corruptError(body + trailer, .deflate)
            #expect(error == .corrupt("deflate: \(trailer.count) bytes after the end of the zlib stream"))
        }
    }

    @Test func bytesAfterAZstdFrameAreCorrupt() throws {
        let body = try Compressor.compress(Array("some json".utf8), coding: .zstd, level: 3)
        for trailer in [[0], [0, 0, 0, 0], Array("garbage".utf8), [0x28, 0xB5]] as [[UInt8]] {
            #expect(Self.corruptError(body + trailer, .zstd)?.isCorrupt == true)
        }
    }

    @Test func concatenatedZstdFramesAreOneBody() throws {
        let first = Array("first frame, ".utf8)
        let second = Array("second frame".utf8)
        let body = try Compressor.compress(first, coding: .zstd, level: 3)
            + (try Compressor.compress(second, coding: .zstd, level: -1))
        #expect(try Decompressor.decompress(body, coding: .zstd, maxOutput: 100) == first + second)
        // A skippable frame (magic 0x184D2A50, 4-byte length, payload) between them is ignored.
        let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 9, 9, 9]
        let framed = try Compressor.compress(first, coding: .zstd, level: 3) + skippable + Self.zstdFixture
        #expect(try Decompressor.decompress(framed, coding: .zstd, maxOutput: 100) == first + Array("hello, dally".utf8))
    }
}
