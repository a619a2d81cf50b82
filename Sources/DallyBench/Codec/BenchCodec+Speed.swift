import DallyCompression
import Foundation

extension BenchCodec {
    // MARK: (b) speed

    func speed(_ traffic: inout CodecTraffic, _ trained: [Key: ZstdDictionary]) throws {
        print(
            "\n(b) speed, MB/s of JSON (one call per section or batch, context setup included); "
                + "dict = \(Self.referenceCapacity / 1024) KiB dictionaries, used whatever the size (no limit); "
                + "ratio default: FramedZstd's default limit, which drops them past 16 KiB at levels 1-3")
        let small = CodecTable.allCases.flatMap { table in (0..<30).map { _ in (table, traffic.json(table, rows: 10)) } }
        let large = CodecTable.allCases.map { ($0, traffic.json($0, rows: 1000)) }
        let batch = traffic.batch(bytes: 1 << 20)
        var rows = [["input", "level", "comp none", "comp dict", "dec none", "dec dict", "ratio none", "ratio dict", "ratio default"]]
        for level in levelList {
            let dictionaries = Dictionary(uniqueKeysWithValues: CodecTable.allCases.map {
                ($0, trained[Key($0, Self.referenceCapacity, level)])
            })
            let lookup: (UInt32) -> ZstdDictionary? = { id in dictionaries.values.first { $0?.id == id } ?? nil }
            for (name, inputs) in [("10-row sections", small), ("1000-row sections", large)] {
                var cells = [name, "\(level)"]
                var compressed: [[[UInt8]]] = [[], []]
                var raw = 0
                for (d, useDictionary) in [false, true].enumerated() {
                    let segments = inputs.map { FramedZstd.Segment($0.1, dictionary: useDictionary ? dictionaries[$0.0] ?? nil : nil) }
                    raw = inputs.reduce(0) { $0 + $1.1.count }
                    cells.append(try Self.rate(bytes: raw, seconds: seconds) {
                        compressed[d] = try segments.map {
                            try FramedZstd.compress(segments: [$0], level: level, dictionaryLimit: .max)
                        }
                    })
                }
                let limited = try inputs.reduce(0) {
                    $0 + (try FramedZstd.compress(segments: [.init($1.1, dictionary: dictionaries[$1.0] ?? nil)], level: level)).count
                }
                for d in 0..<2 {
                    cells.append(try Self.rate(bytes: raw, seconds: seconds) {
                        for body in compressed[d] {
                            _ = try Decompressor.decompress(body, coding: .zstd, maxOutput: 1 << 26, dictionaries: lookup)
                        }
                    })
                }
                cells += compressed.map { Self.ratio(raw, $0.reduce(0) { $0 + $1.count }) } + [Self.ratio(raw, limited)]
                rows.append(cells)
            }
            var cells = ["1 MiB batch", "\(level)"]
            var bodies: [[UInt8]] = [[], []]
            for (d, segments) in [batch.segments([:]), batch.segments(dictionaries)].enumerated() {
                cells.append(try Self.rate(bytes: batch.json.count, seconds: seconds) {
                    bodies[d] = try FramedZstd.compress(segments: segments, level: level, dictionaryLimit: .max)
                })
            }
            for d in 0..<2 {
                cells.append(try Self.rate(bytes: batch.json.count, seconds: seconds) {
                    _ = try Decompressor.decompress(bodies[d], coding: .zstd, maxOutput: 1 << 26, dictionaries: lookup)
                })
            }
            cells += bodies.map { Self.ratio(batch.json.count, $0.count) }
            cells.append(Self.ratio(batch.json.count, try FramedZstd.compress(segments: batch.segments(dictionaries), level: level).count))
            rows.append(cells)
        }
        BenchOutput.table(rows)
        print("1 MiB batch: \(batch.sectionCount) sections of 50-2000 rows, \(batch.json.count) bytes of JSON")
    }

    /// MB/s over `body` processing `bytes` bytes, repeated for at least `seconds` (and 3 times).
    static func rate(bytes: Int, seconds: Double, _ body: () throws -> Void) throws -> String {
        let clock = ContinuousClock()
        var runs = 0
        let start = clock.now
        var elapsed = Duration.zero
        while runs < 3 || elapsed.benchSeconds < seconds {
            try body()
            runs += 1
            elapsed = clock.now - start
        }
        return BenchOutput.figure(Double(bytes * runs) / elapsed.benchSeconds / 1e6)
    }
}
