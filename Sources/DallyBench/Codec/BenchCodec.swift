import ArgumentParser
import DallyCompression
import Foundation

/// `dally-bench codec`: how batch bodies compress, to choose the codec's defaults by measurement.
///
/// Sections of three generated tables (telemetry readings, one status row per device, orders
/// with a JSON items array), encoded exactly as `BatchRequest` puts them on the wire, are
/// compressed in one process, no network:
///
/// - (a) the ratio of sections of 1, 10, 100 and 1000 rows without a dictionary and with
///   dictionaries of 1 to 16 KiB trained on `--samples` earlier sections, at zstd levels 1 to 19,
///   then how a batch of several sections fares cut into frames in different ways;
/// - (b) compression and decompression speed, in MB/s of JSON;
/// - (c) training time and the ratio it buys, per dictionary size, trainer and sample budget;
/// - (d) what a change in the traffic (new device ids, new value ranges) does to a dictionary.
///
/// Every figure comes from a fixed seed, so two runs on one machine differ only in timings.
/// Build with `swift build -c release` first: debug timings mean little.
struct BenchCodec: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codec",
        abstract: "Measure batch compression: ratio per level and dictionary size, framing, speed, training, drift."
    )

    @Option(name: .long, help: "Earlier sections of a table each dictionary is trained on.")
    var samples = 200

    @Option(name: .long, help: "Trainer for the ratio, speed and drift parts: fastCover, cover or legacy.")
    var method = ZstdDictionary.TrainingMethod.fastCover

    @Option(name: .long, help: "Seconds spent on each speed figure.")
    var seconds = 0.3

    @Option(name: .long, help: "zstd levels of the ratio and speed tables, comma-separated.")
    var levels = "1,3,6,9,19"

    @Flag(name: .long, help: "Levels 3 and 6 and two dictionary sizes only: a quick look, e.g. in a debug build.")
    var quick = false

    func validate() throws {
        guard samples >= ZstdDictionary.minimumSamples else {
            throw ValidationError("--samples: at least \(ZstdDictionary.minimumSamples)")
        }
        guard seconds > 0 else { throw ValidationError("--seconds: more than 0") }
        let list = levels.split(separator: ",").compactMap { Int($0) }
        guard !list.isEmpty, list.count == levels.split(separator: ",").count,
              list.allSatisfy({ $0 != 0 && $0 <= 19 })
        else {
            throw ValidationError("--levels: zstd levels (not 0, at most 19), comma-separated")
        }
    }

    var levelList: [Int] { quick ? [3, 6] : levels.split(separator: ",").compactMap { Int($0) } }
    /// Levels of the "where a dictionary stops paying" table: where libzstd's strategy changes.
    /// They include 3 (libzstd's default) and the reference level, which other parts use.
    var crossoverLevels: [Int] { quick ? [3, 6] : [-1, 1, 2, 3, 4, 5, 6, 9, 19] }
    var capacities: [Int] { quick ? [1024, 4096] : [1024, 2048, 4096, 8192, 16384] }
    /// The dictionary size and level the per-table, framing, training and drift parts use:
    /// the defaults chosen from the other parts (``ZstdDictionary/defaultCapacity``,
    /// ``FramedZstd/defaultLevel``).
    static let referenceCapacity = ZstdDictionary.defaultCapacity
    static let referenceLevel = FramedZstd.defaultLevel

    func run() async throws {
        var traffic = CodecTraffic(.base, seed: 0xC0DEC)
        let training = Dictionary(uniqueKeysWithValues: CodecTable.allCases.map { ($0, traffic.samples($0, count: samples)) })
        // Later traffic, never seen in training: the sections measured.
        let later = Dictionary(uniqueKeysWithValues: CodecTable.allCases.map { table in
            (table, CodecRowCounts.measured.map { rows in
                (rows, (0..<CodecRowCounts.sectionsMeasured(rows: rows)).map { _ in traffic.json(table, rows: rows) })
            })
        })
        printHeader(training: training)
        var trained: [Key: ZstdDictionary] = [:]
        let wanted = CodecTable.allCases.flatMap { table in
            capacities.flatMap { capacity in levelList.map { Key(table, capacity, $0) } }
                + crossoverLevels.map { Key(table, Self.referenceCapacity, $0) }
        }
        for key in wanted where trained[key] == nil {
            trained[key] = try ZstdDictionary.train(
                samples: training[key.table] ?? [], capacity: key.capacity, id: UInt32(trained.count + 1), level: key.level,
                method: method)
        }
        try ratios(later, trained)
        try framing(&traffic, trained)
        try speed(&traffic, trained)
        try trainingCosts(training, later)
        try drift(trained)
    }

    struct Key: Hashable {
        let table: CodecTable
        let capacity: Int
        let level: Int
        init(_ table: CodecTable, _ capacity: Int, _ level: Int) {
            (self.table, self.capacity, self.level) = (table, capacity, level)
        }
    }

    private func printHeader(training: [CodecTable: [[UInt8]]]) {
        let bytes = CodecTable.allCases.map { "\($0.rawValue) \((training[$0] ?? []).reduce(0) { $0 + $1.count } / 1000) KB" }
        var probe = CodecTraffic(.base, seed: 1)
        let perRow = CodecTable.allCases.map { "\($0.rawValue) \(probe.json($0, rows: 1000).count / 1000) B" }
        print(
            """
            dally-bench codec: libzstd \(Compressor.zstdVersion), \
            \(ProcessInfo.processInfo.activeProcessorCount) cores; trainer \(method.rawValue)
            each dictionary: trained at the level it is used with, on N=\(samples) earlier sections of its table \
            (1-100 rows, log-uniform): \(bytes.joined(separator: ", "))
            JSON per row: \(perRow.joined(separator: ", ")); ratio = JSON bytes / compressed bytes; \
            a section alone is one zstd frame (header included), with the dictionary whatever its size \
            unless "limit" is said
            """)
    }

    // MARK: (a) ratio

    private func ratios(_ later: [CodecTable: [(Int, [[UInt8]])]], _ trained: [Key: ZstdDictionary]) throws {
        print("\n(a) ratio of sections, all three tables together")
        var rows = [["level", "rows", "none"] + capacities.map { "\($0 / 1024)K" }]
        for level in levelList {
            for (index, count) in CodecRowCounts.measured.enumerated() {
                var raw = 0
                var packed = Array(repeating: 0, count: capacities.count + 1)
                for table in CodecTable.allCases {
                    for section in later[table]?[index].1 ?? [] {
                        raw += section.count
                        packed[0] += try Self.frame(section, nil, level)
                        for (c, capacity) in capacities.enumerated() {
                            packed[c + 1] += try Self.frame(section, trained[Key(table, capacity, level)], level)
                        }
                    }
                }
                rows.append(["\(level)", "\(count)"] + packed.map { Self.ratio(raw, $0) })
            }
        }
        BenchOutput.table(rows)

        let level = Self.referenceLevel
        print("\n(a) ratio per table at level \(level), and deflate 6 (no dictionary) for comparison")
        rows = [["table", "rows", "JSON B", "deflate6", "none"] + capacities.map { "\($0 / 1024)K" }]
        for table in CodecTable.allCases {
            for (rowCount, sections) in later[table] ?? [] {
                let raw = sections.reduce(0) { $0 + $1.count }
                var cells = ["\(table.rawValue)", "\(rowCount)", "\(raw / sections.count)"]
                cells.append(Self.ratio(raw, try sections.reduce(0) { $0 + (try Compressor.compress($1, coding: .deflate, level: 6)).count }))
                cells.append(Self.ratio(raw, try sections.reduce(0) { $0 + (try Self.frame($1, nil, level)) }))
                for capacity in capacities {
                    let dictionary = trained[Key(table, capacity, level)]
                    cells.append(Self.ratio(raw, try sections.reduce(0) { $0 + (try Self.frame($1, dictionary, level)) }))
                }
                rows.append(cells)
            }
        }
        BenchOutput.table(rows)
    }

    /// Bytes of `section` compressed alone into one frame, with `dictionary` whatever its size.
    static func frame(_ section: [UInt8], _ dictionary: ZstdDictionary?, _ level: Int) throws -> Int {
        try FramedZstd.compress(segments: [.init(section, dictionary: dictionary)], level: level, dictionaryLimit: .max).count
    }

    static func ratio(_ raw: Int, _ packed: Int) -> String {
        packed == 0 ? "-" : String(format: "%.2f", Double(raw) / Double(packed))
    }

    // MARK: (a) framing

    private func framing(_ traffic: inout CodecTraffic, _ trained: [Key: ZstdDictionary]) throws {
        print(
            "\n(a) where a dictionary stops paying: one section alone, \(Self.referenceCapacity / 1024) KiB dictionaries "
                + "trained at each level; bytes with the dictionary vs without, telemetry/status/orders (mean of 4 sections)")
        var rows = [["rows", "JSON KB t/s/o"] + crossoverLevels.map { "level \($0)" }]
        for rowCount in [50, 100, 150, 200, 300, 500, 1000] {
            let sections = CodecTable.allCases.map { table in (table, (0..<4).map { _ in traffic.json(table, rows: rowCount) }) }
            var cells = ["\(rowCount)", sections.map { String(format: "%.1f", Double($0.1.reduce(0) { $0 + $1.count }) / 4000) }
                .joined(separator: "/")]
            for level in crossoverLevels {
                var changes: [String] = []
                for (table, tableSections) in sections {
                    let none = try tableSections.reduce(0) { $0 + (try Self.frame($1, nil, level)) }
                    let dictionary = try tableSections.reduce(0) {
                        $0 + (try Self.frame($1, trained[Key(table, Self.referenceCapacity, level)], level))
                    }
                    changes.append(String(format: "%+.0f", (Double(dictionary) / Double(none) - 1) * 100))
                }
                cells.append(changes.joined(separator: "/") + "%")
            }
            rows.append(cells)
        }
        BenchOutput.table(rows)

        print(
            "\n(a) a batch of 3 sections (envelope + telemetry, status, orders), "
                + "\(Self.referenceCapacity / 1024) KiB dictionaries, cut into frames: bytes (mean of 20 batches, 4 of 1000 rows)")
        print(
            "1 frame: the whole body, no dictionary (Compressor, as today); per segment: each segment its own frame, "
                + "with its dictionary; framed: FramedZstd, with its default dictionary limit or none")
        rows = [["level", "rows", "JSON", "1 frame", "per segment", "framed no dict", "framed", "framed no limit"]]
        for level in Array(Set([3, Self.referenceLevel])).sorted() {
            let dictionaries = Dictionary(uniqueKeysWithValues: CodecTable.allCases.map {
                ($0, trained[Key($0, Self.referenceCapacity, level)])
            })
            for rowCount in [1, 10, 100, 1000] {
                var totals = Array(repeating: 0, count: 6)
                let batches = rowCount == 1000 ? 4 : 20
                for _ in 0..<batches {
                    let batch = traffic.batch(rows: rowCount)
                    let segments = batch.segments(dictionaries)
                    totals[0] += batch.json.count
                    totals[1] += try Compressor.compress(batch.json, coding: .zstd, level: level).count
                    totals[2] += try segments.reduce(0) {
                        $0 + ($1.bytes.isEmpty ? 0 : try FramedZstd.compress(segments: [$1], level: level, dictionaryLimit: .max).count)
                    }
                    totals[3] += try FramedZstd.compress(segments: batch.segments([:]), level: level).count
                    totals[4] += try FramedZstd.compress(segments: segments, level: level).count
                    totals[5] += try FramedZstd.compress(segments: segments, level: level, dictionaryLimit: .max).count
                }
                rows.append(["\(level)", "\(rowCount)"] + totals.map { String($0 / batches) })
            }
        }
        BenchOutput.table(rows)
    }

    // MARK: (c) training

    private func trainingCosts(_ training: [CodecTable: [[UInt8]]], _ later: [CodecTable: [(Int, [[UInt8]])]]) throws {
        let level = Self.referenceLevel
        print(
            "\n(c) training, all three tables (N=\(samples) each): ms in all (single thread), "
                + "and the ratio of 1- and 10-row sections at level \(level)")
        var rows = [["trainer", "size", "ms", "ratio 1 row", "ratio 10 rows"]]
        for method in ZstdDictionary.TrainingMethod.allCases {
            for capacity in capacities {
                let (dictionaries, ms) = try Self.trainAll(training, capacity: capacity, level: level, method: method)
                rows.append([method.rawValue, "\(capacity / 1024)K", BenchOutput.figure(ms)]
                    + (try [0, 1].map { try Self.measuredRatio(later, index: $0, dictionaries, level) }))
            }
        }
        BenchOutput.table(rows)

        print("\n(c) sample budget: \(Self.referenceCapacity / 1024) KiB dictionaries, \(method.rawValue), level \(level)")
        rows = [["N sections", "sample KB", "ms", "ratio 1 row", "ratio 10 rows", "ratio 100 rows"]]
        let budgets = quick ? [25, 200] : [10, 25, 50, 100, 200, 400, 800]
        var traffic = CodecTraffic(.base, seed: 0xB0D6E7)
        let all = Dictionary(uniqueKeysWithValues: CodecTable.allCases.map {
            ($0, traffic.samples($0, count: budgets.max() ?? 0))
        })
        for budget in budgets {
            // The most recent `budget` sections.
            let subset = all.mapValues { Array($0.suffix(budget)) }
            let bytes = subset.values.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } }
            let (dictionaries, ms) = try Self.trainAll(subset, capacity: Self.referenceCapacity, level: level, method: method)
            rows.append(["\(budget)", "\(bytes / 1000)", BenchOutput.figure(ms)]
                + (try [0, 1, 2].map { try Self.measuredRatio(later, index: $0, dictionaries, level) }))
        }
        BenchOutput.table(rows)
    }

    static func trainAll(
        _ samples: [CodecTable: [[UInt8]]], capacity: Int, level: Int, method: ZstdDictionary.TrainingMethod
    ) throws -> ([CodecTable: ZstdDictionary], Double) {
        let clock = ContinuousClock()
        let start = clock.now
        var dictionaries: [CodecTable: ZstdDictionary] = [:]
        for (index, table) in CodecTable.allCases.enumerated() {
            dictionaries[table] = try ZstdDictionary.train(
                samples: samples[table] ?? [], capacity: capacity, id: UInt32(index + 1), level: level, method: method)
        }
        return (dictionaries, (clock.now - start).benchMilliseconds)
    }

    /// The ratio of the measured sections of the `index`th row count, all tables, with `dictionaries`.
    static func measuredRatio(
        _ later: [CodecTable: [(Int, [[UInt8]])]], index: Int, _ dictionaries: [CodecTable: ZstdDictionary], _ level: Int
    ) throws -> String {
        var raw = 0, packed = 0
        for table in CodecTable.allCases {
            for section in later[table]?[index].1 ?? [] {
                raw += section.count
                packed += try frame(section, dictionaries[table], level)
            }
        }
        return ratio(raw, packed)
    }
}

extension ZstdDictionary.TrainingMethod: ExpressibleByArgument {}
