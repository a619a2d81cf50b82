@testable import DallyCompression
import Testing

@Suite("ZstdDictionary")
struct ZstdDictionaryTests {
    /// 200 telemetry sections of 1 to 50 rows: about 250 KB, a realistic training budget.
    static let samples: [[UInt8]] = {
        var sections = TelemetrySections(seed: 1)
        return sections.samples(200)
    }()

    static let dictionary: ZstdDictionary = {
        do {
            return try ZstdDictionary.train(samples: samples, capacity: 4096, id: 7, level: 3)
        } catch {
            fatalError("training the fixture dictionary failed: \(error)")
        }
    }()

    /// Another dictionary from the same samples, under id 8.
    static let dictionaryEight: ZstdDictionary = {
        do {
            return try ZstdDictionary.train(samples: samples, capacity: 2048, id: 8, level: 3)
        } catch {
            fatalError("training the fixture dictionary failed: \(error)")
        }
    }()

    @Test(arguments: ZstdDictionary.TrainingMethod.allCases)
    func trainingForcesTheIdAndIsDeterministic(_ method: ZstdDictionary.TrainingMethod) throws {
        let first = try ZstdDictionary.train(samples: Self.samples, capacity: 2048, id: 40_000, level: 3, method: method)
        let second = try ZstdDictionary.train(samples: Self.samples, capacity: 2048, id: 40_000, level: 3, method: method)
        #expect(first.id == 40_000)
        #expect(first.bytes.count <= 2048 && first.bytes.count > 256)
        #expect(Array(first.bytes.prefix(8)) == [0x37, 0xA4, 0x30, 0xEC, 0x40, 0x9C, 0x00, 0x00])
        #expect(first.bytes == second.bytes)
        // The same samples under another id: only the id differs.
        let other = try ZstdDictionary.train(samples: Self.samples, capacity: 2048, id: 9, level: 3, method: method)
        #expect(Array(other.bytes[4..<8]) == [9, 0, 0, 0])
        #expect(other.bytes[8...] == first.bytes[8...])
    }

    @Test func tooFewSamplesSayWhatIsNeeded() throws {
        let error = try #require(throws: CompressionError.self) {
            try ZstdDictionary.train(samples: Array(Self.samples.prefix(3)), capacity: 4096, id: 1, level: 3)
        }
        let bytes = Self.samples.prefix(3).reduce(0) { $0 + $1.count }
        #expect(error == .notEnoughSamples(samples: 3, bytes: bytes, neededSamples: 8, neededBytes: 4096))
        #expect(error.description.contains("needs at least 8 samples and 4096 bytes"))
        // Enough samples, but together smaller than the dictionary asked for.
        let tiny = [[UInt8]](repeating: Array("[1,2]".utf8), count: 20)
        #expect(throws: CompressionError.notEnoughSamples(samples: 20, bytes: 100, neededSamples: 8, neededBytes: 4096)) {
            try ZstdDictionary.train(samples: tiny, capacity: 4096, id: 1, level: 3)
        }
        #expect(throws: CompressionError.notEnoughSamples(samples: 0, bytes: 0, neededSamples: 8, neededBytes: 256)) {
            try ZstdDictionary.train(samples: [], capacity: 256, id: 1, level: 3)
        }
    }

    @Test func samplesWithNothingToLearnAreRefused() {
        // Enough of them, but all alike: the legacy trainer finds nothing to keep. (COVER and
        // fastCover return a small dictionary instead, which helps little.)
        let alike = [[UInt8]](repeating: Array("the same sample, over and over".utf8), count: 200)
        let error = #expect(throws: CompressionError.self) {
            try ZstdDictionary.train(samples: alike, capacity: 1024, id: 1, level: 3, method: .legacy)
        }
        #expect(error?.description.contains("the samples hold nothing to learn") == true, "\(String(describing: error))")
    }

    @Test(arguments: [UInt32(0), 0x8000_0000, UInt32.max])
    func reservedIdsAreRefused(_ id: UInt32) throws {
        #expect(throws: CompressionError.reservedDictionaryID(id)) {
            try ZstdDictionary.train(samples: Self.samples, capacity: 1024, id: id, level: 3)
        }
        #expect(throws: CompressionError.reservedDictionaryID(id)) {
            try ZstdDictionary(id: id, bytes: Self.dictionary.bytes)
        }
    }

    @Test func trainingRefusesBadLevelsAndCapacities() {
        #expect(throws: CompressionError.invalidLevel(0, coding: .zstd)) {
            try ZstdDictionary.train(samples: Self.samples, capacity: 1024, id: 1, level: 0)
        }
        for capacity in [0, 255, (1 << 20) + 1] {
            #expect(throws: CompressionError.self) {
                try ZstdDictionary.train(samples: Self.samples, capacity: capacity, id: 1, level: 3)
            }
        }
    }

    @Test func initChecksTheBytes() throws {
        let valid = Self.dictionary.bytes
        #expect(try ZstdDictionary(id: 7, bytes: valid).bytes == valid)
        let wrongID = #expect(throws: CompressionError.self) { try ZstdDictionary(id: 8, bytes: valid) }
        #expect(wrongID == .invalidDictionary("its header carries id 7, not 8"))
        // Raw content (no magic number) is refused: a frame could not name it.
        let raw = Array(valid[200...])
        let rawError = #expect(throws: CompressionError.self) { try ZstdDictionary(id: 7, bytes: raw) }
        #expect(rawError?.description.contains("raw-content") == true)
        for bad in [[], Array(valid.prefix(4)), Array(valid.prefix(8)), Array(valid.prefix(40))] as [[UInt8]] {
            #expect(throws: CompressionError.self, "\(bad.count) bytes") { try ZstdDictionary(id: 7, bytes: bad) }
        }
    }

    /// Bytes of `rows`-row sections (50 of them, not among the training samples) as JSON,
    /// compressed alone, and compressed with the 4 KiB fixture dictionary, at level 3.
    static func sizes(rows: Int) throws -> (raw: Int, plain: Int, withDictionary: Int) {
        var later = TelemetrySections(seed: 2)
        var sizes = (raw: 0, plain: 0, withDictionary: 0)
        for _ in 0..<50 {
            let section = later.next(rows: rows)
            sizes.raw += section.count
            sizes.plain += try FramedZstd.compress(segments: [.init(section)], level: 3).count
            sizes.withDictionary += try FramedZstd.compress(
                segments: [.init(section, dictionary: dictionary)], level: 3).count
        }
        return sizes
    }

    @Test func aDictionaryMakesSmallSectionsMuchSmaller() throws {
        // Measured (ratios of JSON to compressed): 1 row 1.14 without a dictionary, 3.34 with;
        // 10 rows 2.26 and 3.17. Each row's id and timestamp are random enough to bound the ratio.
        let one = try Self.sizes(rows: 1)
        #expect(Double(one.raw) / Double(one.plain) < 1.3)
        #expect(Double(one.raw) / Double(one.withDictionary) > 3.0)
        let ten = try Self.sizes(rows: 10)
        #expect(Double(ten.raw) / Double(ten.plain) < 2.45)
        #expect(Double(ten.raw) / Double(ten.withDictionary) > 2.9)
        #expect(Double(ten.withDictionary) < 0.8 * Double(ten.plain))
    }

    @Test func oneDictionaryServesConcurrentCallers() async throws {
        let dictionary = try ZstdDictionary(id: 7, bytes: Self.dictionary.bytes)
        var sections = TelemetrySections(seed: 3)
        let inputs = (0..<16).map { _ in sections.next(rows: 20) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, input) in inputs.enumerated() {
                group.addTask {
                    let level = [1, 3, 9][index % 3]
                    let body = try FramedZstd.compress(segments: [.init(input, dictionary: dictionary)], level: level)
                    let decoded = try Decompressor.decompress(body, coding: .zstd, maxOutput: input.count) { _ in dictionary }
                    #expect(decoded == input)
                }
            }
            try await group.waitForAll()
        }
    }
}
