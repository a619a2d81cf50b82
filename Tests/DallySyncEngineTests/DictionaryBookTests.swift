import DallyCompression
import DallyCore
import DallyStore
import DallySync
import Synchronization
import Testing

@testable import DallySyncEngine

/// The gateway's dictionary policy, without a network: when it trains, what it may use, what
/// it retires.
@Suite("Dictionary book")
struct DictionaryBookTests {
    /// A telemetry-like section of `rows` rows, as the batch codec writes it.
    static func section(_ n: Int, rows: Int = 20, drift: Int = 0) -> [UInt8] {
        var changes: [BatchRequest.Change] = []
        for r in 0..<rows {
            let k = n * rows + r
            changes.append(
                .init(
                    id: "t-\(k % 50 + drift * 1000)-\(k)", baseVersion: nil, updatedAt: 1_800_000_000_000 + Int64(k) * 97,
                    deleted: false,
                    values: [
                        .string("dev-\(k % 50 + drift * 1000)"), .double(Double(200 + k % 40 + drift * 500) / 10),
                        .int(Int64(80 - k % 7 + drift * 9)), .int(Int64(-60 - k % 11)),
                    ]))
        }
        let request = BatchRequest(
            batchID: "b", gateway: "g", replica: "r", since: TableVersions(),
            sections: [.init(table: "telemetry", columns: ["device", "temp", "battery", "rssi"], changes: changes)])
        return request.encode()
    }

    static func settings() -> DictionaryBook.Settings {
        var settings = DictionaryBook.Settings()
        settings.capacity = 2_048
        settings.minimumSamples = 16 * 1024
        settings.window = 8 * 1024
        return settings
    }

    static func counter() -> @Sendable () -> UInt32 {
        let next = Counter()
        return { next.take() }
    }

    /// A wake may train from two tasks at once (beside its last batch on a long link, and as
    /// its last answer is applied): one dictionary comes of it, not one each.
    @Test func callsAtTheSameTimeTrainATableOnce() async throws {
        let book = DictionaryBook(settings: Self.settings(), kept: [], nextID: Self.counter())
        for n in 0..<40 {
            let body = Self.section(n)
            book.record(table: "telemetry", section: body[...])
        }
        let trained = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { book.train().count } }
            return await group.reduce(0, +)
        }
        #expect(trained == 1)
        #expect(book.uploads(for: nil).count == 1)
    }

    @Test func trainsOnceThereAreEnoughSamplesAndUsesOnlyWhatTheCloudAcknowledged() throws {
        let book = DictionaryBook(settings: Self.settings(), kept: [], nextID: Self.counter())
        var n = 0
        while book.train().isEmpty {
            let body = Self.section(n)
            book.record(table: "telemetry", section: body[...])
            n += 1
            #expect(n < 100, "never trained")
            if n >= 100 { return }
        }
        // Trained from at least the minimum of samples, and not used before the acknowledgement.
        #expect(n * Self.section(0).count >= Self.settings().minimumSamples)
        #expect(book.dictionary(for: "telemetry") == nil)
        let uploads = book.uploads(for: ["telemetry"])
        #expect(uploads.map(\.dictionary.id) == [40_000])
        // Not offered over an uplink the table may not use.
        #expect(book.uploads(for: ["orders"]).isEmpty)
        // Not trained again while the first awaits its acknowledgement.
        #expect(book.train().isEmpty)
        book.acknowledged(40_000)
        #expect(book.dictionary(for: "telemetry")?.id == 40_000)
        #expect(book.uploads(for: nil).isEmpty)

        // It makes a small section markedly smaller.
        let small = Self.section(1_000, rows: 5)
        let plain = try FramedZstd.compress(segments: [.init(small)], level: 3).count
        let withDictionary = try FramedZstd.compress(segments: [.init(small, dictionary: book.dictionary(for: "telemetry"))], level: 3).count
        #expect(Double(withDictionary) < 0.7 * Double(plain), "\(withDictionary) vs \(plain)")
    }

    @Test func aDegradedRatioRetrainsAndRetiresTheOldDictionary() throws {
        let book = DictionaryBook(settings: Self.settings(), kept: [], nextID: Self.counter())
        for n in 0..<40 {
            let body = Self.section(n)
            book.record(table: "telemetry", section: body[...])
        }
        let first = try #require(book.train().first)
        book.acknowledged(first.dictionary.id)
        // A first window sets the baseline: the same kind of data, nothing to retrain.
        for n in 40..<60 {
            book.record(table: "telemetry", section: Self.section(n, rows: 5)[...])
        }
        #expect(book.train().isEmpty)
        // Data unlike what it was trained on compresses worse: retrain.
        for n in 0..<60 {
            book.record(table: "telemetry", section: Self.section(n, rows: 5, drift: 1)[...])
        }
        let second = try #require(book.train().first)
        #expect(second.dictionary.id != first.dictionary.id)
        // The old one stays in use until the new one is acknowledged, then is retired.
        #expect(book.dictionary(for: "telemetry")?.id == first.dictionary.id)
        book.acknowledged(second.dictionary.id)
        #expect(book.dictionary(for: "telemetry")?.id == second.dictionary.id)
        #expect(book.retired == [first.dictionary.id])
        book.deleted(first.dictionary.id)
        #expect(book.retired.isEmpty)
    }

    /// A large section is a sample but not a measure: the dictionary moves its ratio too little
    /// to tell, and measuring compressed it a second time.
    @Test func onlySectionsSmallEnoughToTellAreMeasured() throws {
        var settings = Self.settings()
        settings.window = 1 << 20
        let book = DictionaryBook(settings: settings, kept: [], nextID: Self.counter())
        for n in 0..<40 {
            book.record(table: "telemetry", section: Self.section(n)[...])
        }
        let trained = try #require(book.train().first)
        book.acknowledged(trained.dictionary.id)
        let small = Self.section(40, rows: 5)
        book.record(table: "telemetry", section: small[...])
        #expect(book.windowBytes(of: "telemetry") == small.count)
        let large = Self.section(41, rows: 400)
        #expect(large.count > settings.largestMeasured)
        book.record(table: "telemetry", section: large[...])
        #expect(book.windowBytes(of: "telemetry") == small.count)
    }

    @Test func keptDictionariesComeBackAfterARestartAndAnUnknownOneIsOfferedAgain() throws {
        let book = DictionaryBook(settings: Self.settings(), kept: [], nextID: Self.counter())
        for n in 0..<40 {
            let body = Self.section(n)
            book.record(table: "telemetry", section: body[...])
        }
        let trained = try #require(book.train().first)
        let kept = [
            KeptDictionary(
                id: trained.dictionary.id, table: "telemetry", bytes: trained.dictionary.bytes, createdAt: 1, ackedAt: 2)
        ]
        let restarted = DictionaryBook(settings: Self.settings(), kept: kept)
        #expect(restarted.dictionary(for: "telemetry")?.id == trained.dictionary.id)
        restarted.unknown(trained.dictionary.id)
        #expect(restarted.dictionary(for: "telemetry") == nil)
        #expect(restarted.uploads(for: nil).map(\.dictionary.id) == [trained.dictionary.id])
    }
}

/// Dictionary ids 40000, 40001, …
private final class Counter: Sendable {
    private let value = Mutex<UInt32>(40_000)
    func take() -> UInt32 {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
