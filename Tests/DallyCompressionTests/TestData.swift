import DallyCore
@testable import DallyCompression

/// Deterministic inputs, so a failure reproduces byte for byte.
enum TestData {
    /// 10 MB of mixed content: incompressible runs, repeated text, zeros and JSON-like lines,
    /// so every path of the encoders (literals, matches, stored blocks) is exercised.
    static let tenMegabytes = mixed(count: 10_000_000)

    /// `count` bytes alternating between kinds of content, from a fixed seed.
    static func mixed(count: Int, seed: UInt64 = 0x0DA1_1F00) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8_192)
        let phrase = Array("the quick brown fox jumps over the lazy dog; ".utf8)
        while bytes.count < count {
            let length = Int(random.next() % 4_096) + 1
            switch random.next() % 4 {
            case 0:
                for _ in 0..<(length + 7) / 8 {
                    withUnsafeBytes(of: random.next()) { bytes.append(contentsOf: $0) }
                }
            case 1:
                for _ in 0..<length / phrase.count + 1 { bytes.append(contentsOf: phrase) }
            case 2:
                bytes.append(contentsOf: repeatElement(0, count: length))
            default:
                bytes.append(contentsOf: jsonRecords(length / 100 + 1, from: Int(random.next() % 100_000)))
            }
        }
        return Array(bytes.prefix(count))
    }

    /// A JSON array of `count` similar records, like a page of Dally rows.
    static func jsonRecords(_ count: Int, from first: Int = 0) -> [UInt8] {
        let statuses = ["open", "paid", "shipped", "cancelled"]
        var text = "["
        for id in first..<first + count {
            if id > first { text += "," }
            text += #"{"id":"ord_\#(id)","table":"orders","status":"\#(statuses[id % 4])","#
            text += #""amount_cents":\#(id * 137 % 100_000),"updated_at":"2025-03-\#(10 + id % 19)T12:\#(10 + id % 50):00Z"}"#
        }
        return Array((text + "]").utf8)
    }

    /// `mebibytes` MiB of zeros coded with `coding` (zstd or deflate), built from one compressed
    /// MiB repeated so the test only ever holds the compressed bytes.
    ///
    /// The first MiB is encoded and flushed, then a second MiB is encoded and flushed: the bytes
    /// of that second flush decode to a MiB of zeros after any MiB of zeros, so they are
    /// repeated. For deflate the zlib trailer's Adler-32 is rewritten for the full length.
    static func zeroBomb(_ coding: ContentCoding, mebibytes: Int) throws -> [UInt8] {
        precondition(mebibytes >= 2)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var head: [UInt8] = [], unit: [UInt8] = [], tail: [UInt8] = []
        try zeros.withUnsafeBytes { mebibyte in
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            switch coding {
            case .zstd:
                let encoder = try ZstdEncoder(level: 3)
                try encoder.encode(mebibyte, flush: .flush, into: &head)
                try encoder.encode(mebibyte, flush: .flush, into: &unit)
                try encoder.encode(none, flush: .end, into: &tail)
            case .deflate:
                let encoder = try ZlibEncoder(level: 9)
                try encoder.encode(mebibyte, flush: .flush, into: &head)
                try encoder.encode(mebibyte, flush: .flush, into: &unit)
                try encoder.encode(none, flush: .end, into: &tail)
                let total = UInt64(mebibytes) << 20
                // Adler-32 of n zero bytes: a stays 1, b gains 1 per byte.
                let adler = UInt32(total % 65_521) << 16 | 1
                tail.removeLast(4)
                tail.append(contentsOf: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: adler >> $0) })
            case .identity:
                preconditionFailure("identity cannot be a bomb")
            }
        }
        var bomb = head
        bomb.reserveCapacity(head.count + unit.count * (mebibytes - 1) + tail.count)
        for _ in 1..<mebibytes { bomb.append(contentsOf: unit) }
        return bomb + tail
    }

    /// `data` as a zstd frame whose header does not declare its size, as a streaming client
    /// would send it, so only the streaming limit can catch an oversized one.
    static func zstdWithoutContentSize(_ data: [UInt8]) throws -> [UInt8] {
        var frame: [UInt8] = []
        let encoder = try ZstdEncoder(level: 3)
        try data.withUnsafeBytes { try encoder.encode($0, flush: .flush, into: &frame) }
        try encoder.encode(UnsafeRawBufferPointer(start: nil, count: 0), flush: .end, into: &frame)
        return frame
    }
}

extension DecompressionError {
    /// Whether this is `.corrupt`, whatever the message.
    var isCorrupt: Bool {
        if case .corrupt = self { true } else { false }
    }
}

/// Batch sections of a telemetry table as Dally sends them (docs/PROTOCOL.md §4.1): rows
/// `[id, null, updated_at, "put", device, temp, humidity, battery, rssi]`, from a fixed seed.
struct TelemetrySections {
    private var random: SplitMix64
    private var clock: Int64 = 1_750_000_000_000
    /// Devices are named `dev-<first>` to `dev-<first + 31>`.
    let firstDevice: Int
    /// Tenths of a degree added to every temperature: a shifted distribution.
    let warmer: Int

    init(seed: UInt64, firstDevice: Int = 0, warmer: Int = 0) {
        self.random = SplitMix64(seed: seed)
        self.firstDevice = firstDevice
        self.warmer = warmer
    }

    /// One section of `rows` rows, as JSON.
    mutating func next(rows: Int) -> [UInt8] {
        var text = #"{"table":"telemetry","columns":["device","temp","humidity","battery","rssi"],"rows":["#
        for row in 0..<rows {
            clock += Int64(random.next() % 900) + 100
            let device = firstDevice + Int(random.next() % 32)
            let temp = Double(150 + warmer + Int(random.next() % 100)) / 10
            let humidity = Double(300 + Int(random.next() % 400)) / 10
            let battery = 40 + Int(random.next() % 60)
            let rssi = -(40 + Int(random.next() % 50))
            let suffix = String(random.next() & 0xFFFF_FFFF_FFFF, radix: 16)
            if row > 0 { text += "," }
            text += #"["0193\#(String(clock, radix: 16))-\#(suffix)",null,\#(clock),"put","dev-\#(device < 10 ? "0" : "")\#(device)","#
            text += "\(temp),\(humidity),\(battery),\(rssi)]"
        }
        return Array((text + "]}").utf8)
    }

    /// `count` sections of 1 to 50 rows, as training samples.
    mutating func samples(_ count: Int) -> [[UInt8]] {
        (0..<count).map { _ in next(rows: Int(random.next() % 50) + 1) }
    }
}
