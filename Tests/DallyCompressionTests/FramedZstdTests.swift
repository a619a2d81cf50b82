@testable import DallyCompression
import Testing

@Suite("FramedZstd")
struct FramedZstdTests {
    static let telemetry = ZstdDictionaryTests.dictionary
    /// A second dictionary, of other content, under another id.
    static let orders: ZstdDictionary = {
        let samples = (0..<100).map { n in
            Array(#"{"table":"orders","columns":["customer","total"],"rows":[["o\#(n)",null,1,"put","c\#(n % 7)",\#(n)]]}"#.utf8)
        }
        do {
            return try ZstdDictionary.train(samples: samples, capacity: 1024, id: 300, level: 3)
        } catch {
            fatalError("training the orders dictionary failed: \(error)")
        }
    }()

    static func lookup(_ id: UInt32) -> ZstdDictionary? {
        [telemetry, orders].first { $0.id == id }
    }

    /// A batch as the gateway would cut it: envelope, sections with and without dictionaries,
    /// separators, an empty piece, the closing bracket.
    static func batch() -> [FramedZstd.Segment] {
        var sections = TelemetrySections(seed: 11)
        return [
            .init(Array(#"{"batch":"gw-1-b7","gateway":"gw-1","replica":"r1","since":{},"sections":["#.utf8)),
            .init(sections.next(rows: 12), dictionary: telemetry),
            .init(Array(",".utf8)),
            .init(Array(#"{"table":"orders","columns":["customer","total"],"rows":[["o1",null,1,"put","c1",5]]}"#.utf8),
                  dictionary: orders),
            .init([UInt8]()),
            .init(Array(",".utf8)),
            .init(Array(#"{"table":"notes","columns":["text"],"rows":[["n1",null,1,"put","hello"]]}"#.utf8)),
            .init(Array(",".utf8), dictionary: orders),
            .init(sections.next(rows: 3), dictionary: telemetry),
            .init(Array("]}".utf8)),
        ]
    }

    static func joined(_ segments: [FramedZstd.Segment]) -> [UInt8] {
        segments.flatMap { Array($0.bytes) }
    }

    @Test(arguments: [0, 200, FramedZstd.defaultDictionaryLimit(level: 3), Int.max])
    func mixedSegmentsRoundTrip(_ limit: Int) throws {
        let segments = Self.batch()
        let document = Self.joined(segments)
        for level in [-1, 1, 3, 19] {
            let body = try FramedZstd.compress(segments: segments, level: level, dictionaryLimit: limit)
            #expect(try Decompressor.decompress(body, coding: .zstd, maxOutput: document.count, dictionaries: Self.lookup) == document)
        }
    }

    @Test func slicesOfOneBufferRoundTrip() throws {
        var sections = TelemetrySections(seed: 5)
        let document = sections.next(rows: 40)
        let cut = document.count / 3
        let segments: [FramedZstd.Segment] = [
            .init(document[..<cut]), .init(document[cut..<(2 * cut)], dictionary: Self.telemetry),
            .init(document[(2 * cut)...], dictionary: Self.orders),
        ]
        let body = try FramedZstd.compress(segments: segments, level: 3)
        #expect(try Decompressor.decompress(body, coding: .zstd, maxOutput: document.count, dictionaries: Self.lookup) == document)
    }

    @Test func framesAreCutWhereTheDictionaryChanges() {
        let plan = FramedZstd.plan(Self.batch(), dictionaryLimit: FramedZstd.defaultDictionaryLimit(level: 3))
        // The envelope joins the first telemetry section; "," and the orders section share
        // nothing with telemetry; the notes section (no dictionary) and the separators join the
        // orders frame; the last telemetry section takes the closing bracket.
        #expect(plan.map { $0.dictionary?.id } == [7, 300, 7])
        #expect(plan.map(\.parts.count) == [3, 4, 2])
        #expect(plan.reduce(0) { $0 + $1.size } == Self.joined(Self.batch()).count)
    }

    @Test func theDefaultLimitDependsOnTheLevel() {
        for level in 1...3 { #expect(FramedZstd.defaultDictionaryLimit(level: level) == 16_384) }
        for level in [-5, -1, 4, 6, 19] { #expect(FramedZstd.defaultDictionaryLimit(level: level) == .max) }
    }

    @Test func dictionaryFramesStayUnderTheLimit() {
        // With a limit of 200 bytes the telemetry sections (over 200 bytes) lose their
        // dictionary and join frames without one; the orders frame stops at 200 bytes.
        let plan = FramedZstd.plan(Self.batch(), dictionaryLimit: 200)
        #expect(plan.map { $0.dictionary?.id } == [nil, 300, nil])
        #expect(plan.map(\.parts.count) == [3, 4, 2])
        #expect(plan.allSatisfy { $0.dictionary == nil || $0.size <= 200 })
        // No dictionary at all: one frame.
        #expect(FramedZstd.plan(Self.batch(), dictionaryLimit: 0).map(\.parts.count) == [9])
        // Segments of one dictionary that together pass the limit are cut into frames under it.
        let pieces = (0..<10).map { _ in FramedZstd.Segment([UInt8](repeating: 65, count: 100), dictionary: Self.telemetry) }
        #expect(FramedZstd.plan(pieces, dictionaryLimit: 250).map(\.size) == [200, 200, 200, 200, 200])
    }

    @Test func emptyBodiesAreOneEmptyFrame() throws {
        for segments in [[], [.init([UInt8]())], [.init([UInt8](), dictionary: Self.telemetry), .init([UInt8]())]]
            as [[FramedZstd.Segment]]
        {
            let body = try FramedZstd.compress(segments: segments, level: 3)
            #expect(body.count == 9)  // magic, descriptor, 1-byte size, an empty last block
            #expect(try Decompressor.decompress(body, coding: .zstd, maxOutput: 0) == [])
        }
    }

    @Test func framesCarrySizeAndDictionaryIdButNoChecksum() throws {
        let section = Array(#"{"table":"orders","columns":["customer","total"],"rows":[]}"#.utf8)
        let body = try FramedZstd.compress(segments: [.init(section, dictionary: Self.orders)], level: 3)
        #expect(Array(body.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
        // Frame header descriptor: single segment (5), no checksum (2), dictionary id in 2 bytes (1-0 = 2).
        let descriptor = body[4]
        #expect(descriptor & 0x20 != 0)
        #expect(descriptor & 0x04 == 0)
        #expect(descriptor & 0x03 == 2)
        #expect(Array(body[5..<7]) == [0x2C, 0x01])  // 300, little-endian
        #expect(body[7] == UInt8(section.count))  // declared content size, 1 byte
    }

    @Test func invalidLevelsAreRefused() {
        for level in [0, 20, Int.max] {
            #expect(throws: CompressionError.invalidLevel(level, coding: .zstd)) {
                try FramedZstd.compress(segments: [.init([1, 2, 3])], level: level)
            }
        }
    }
}
