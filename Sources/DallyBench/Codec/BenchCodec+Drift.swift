import DallyCompression
import Foundation

extension BenchCodec {
    // MARK: (d) drift

    func drift(_ trained: [Key: ZstdDictionary]) throws {
        let level = Self.referenceLevel
        print(
            "\n(d) drift: \(Self.referenceCapacity / 1024) KiB dictionaries trained on the base traffic, "
                + "used on changed traffic; ratio of 100 sections per table, level \(level), all tables")
        var rows = [["traffic", "rows", "none", "old dict", "fresh dict", "old vs fresh", "old vs none"]]
        for distribution in CodecDistribution.all {
            var traffic = CodecTraffic(distribution, seed: 0xD21F7)
            let fresh = try Self.trainAll(
                Dictionary(uniqueKeysWithValues: CodecTable.allCases.map { ($0, traffic.samples($0, count: samples)) }),
                capacity: Self.referenceCapacity, level: level, method: method
            ).0
            for rowCount in [1, 10] {
                var raw = 0
                var packed = [0, 0, 0]
                for table in CodecTable.allCases {
                    for _ in 0..<100 {
                        let section = traffic.json(table, rows: rowCount)
                        raw += section.count
                        packed[0] += try Self.frame(section, nil, level)
                        packed[1] += try Self.frame(section, trained[Key(table, Self.referenceCapacity, level)], level)
                        packed[2] += try Self.frame(section, fresh[table], level)
                    }
                }
                rows.append([distribution.name, "\(rowCount)"] + packed.map { Self.ratio(raw, $0) } + [
                    Self.percent(Double(packed[2]) / Double(packed[1]) - 1),
                    Self.percent(Double(packed[0]) / Double(packed[1]) - 1),
                ])
            }
        }
        BenchOutput.table(rows)
        print("(old vs fresh: the ratio lost by keeping the old dictionary; old vs none: what it still gains)")

        // How much the ratio moves on unchanged traffic, from window to window: a retraining
        // threshold must stay clear of it.
        var traffic = CodecTraffic(.base, seed: 0x5EED)
        for windowSize in [10, 50, 200] {
            var windows: [Double] = []
            for _ in 0..<40 {
                var raw = 0, packed = 0
                for _ in 0..<windowSize {
                    let table = CodecTable.allCases[Int(traffic.next() % 3)]
                    let section = traffic.json(table, rows: traffic.rowCount())
                    raw += section.count
                    packed += try Self.frame(section, trained[Key(table, Self.referenceCapacity, level)], level)
                }
                windows.append(Double(raw) / Double(packed))
            }
            let mean = windows.reduce(0, +) / Double(windows.count)
            let spread = windows.map { abs($0 / mean - 1) }.sorted()
            print(
                "unchanged traffic, 40 windows of \(windowSize) sections (1-100 rows): ratio \(String(format: "%.2f", mean)), "
                    + "window vs mean: median \(Self.percent(spread[spread.count / 2])), "
                    + "95th \(Self.percent(spread[spread.count * 95 / 100])), max \(Self.percent(spread.last ?? 0))")
        }
    }

    static func percent(_ fraction: Double) -> String { String(format: "%+.0f%%", fraction * 100) }
}
