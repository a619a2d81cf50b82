import DallyCore

/// TinySync's times: ISO 8601 strings on the wire, milliseconds since 1970 in the replica.
///
/// Parsing accepts what TinySync clients send: `2014-02-14T09:12:43-0700` (the seed's form),
/// `…Z`, `…+07:00`, `…+07`, fractional seconds of any length, and a space for the `T`. A time
/// without a zone is read as UTC. Fractions finer than a millisecond are cut, never rounded
/// up: an earlier cursor can only resend rows, a later one could skip them.
///
/// ```swift
/// TinySyncTime.parse("2014-02-14T09:12:43-0700")   // 1392394363000
/// TinySyncTime.format(1392394363000)               // "2014-02-14T16:12:43.000Z"
/// TinySyncTime.format(.min)                        // nil: no four-digit year writes it
/// ```
enum TinySyncTime {
    /// Milliseconds since 1970, or nil for a string that is not such a time.
    static func parse(_ text: String) -> Int64? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.digits(4), scanner.take(UInt8(ascii: "-")),
            let month = scanner.digits(2), scanner.take(UInt8(ascii: "-")),
            let day = scanner.digits(2), scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t"))
                || scanner.take(UInt8(ascii: " ")),
            let hour = scanner.digits(2), scanner.take(UInt8(ascii: ":")), let minute = scanner.digits(2)
        else { return nil }
        var second: Int64 = 0
        var millis: Int64 = 0
        if scanner.take(UInt8(ascii: ":")) {
            guard let s = scanner.digits(2) else { return nil }
            second = s
            if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
                guard let fraction = scanner.fractionMillis() else { return nil }
                millis = fraction
            }
        }
        guard let offsetMinutes = scanner.zone(), scanner.atEnd else { return nil }
        guard (1...12).contains(month), (1...CivilCalendar.daysIn(month: month, year: year)).contains(day), hour <= 23, minute <= 59,
            second <= 59
        else { return nil }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second - offsetMinutes * 60
        return seconds * 1000 + millis
    }

    /// The first and last instants a four-digit year writes: 0000-01-01T00:00:00.000Z and
    /// 9999-12-31T23:59:59.999Z.
    static let writable: ClosedRange<Int64> = -62_167_219_200_000...253_402_300_799_999

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC: the form every answer uses, millisecond-exact; nil
    /// outside ``writable`` (an INTEGER `_at` column may hold any number: the answer gives that
    /// number as it is).
    static func format(_ millis: Int64) -> String? {
        guard writable.contains(millis) else { return nil }
        let (days, msOfDay) = floorDivide(millis, 86_400_000)
        let (year, month, day) = CivilCalendar.date(days: days)
        let hour = msOfDay / 3_600_000
        let minute = msOfDay / 60_000 % 60
        let second = msOfDay / 1000 % 60
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))."
            + "\(pad(msOfDay % 1000, 3))Z"
    }

    /// A time as an answer writes it: ``format(_:)``'s string, or the number itself where no
    /// four-digit year writes it (an INTEGER `_at` column may hold any number).
    static func json(_ millis: Int64) -> JSONValue {
        format(millis).map(JSONValue.string) ?? .int(millis)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let r = ((a % b) + b) % b
        return ((a - r) / b, r)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func digits(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            index += count
            return value
        }

        /// One or more digits after the decimal sign, as whole milliseconds (cut, not rounded).
        mutating func fractionMillis() -> Int64? {
            var millis: Int64 = 0
            var count = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                if count < 3 { millis = millis * 10 + Int64(bytes[index] - 0x30) }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<max(count, 3) { millis *= 10 }
            return millis
        }

        /// The zone's offset east of UTC in minutes: `Z`, `±HH`, `±HHMM`, `±HH:MM`, or none (UTC).
        mutating func zone() -> Int64? {
            if atEnd { return 0 }
            if take(UInt8(ascii: "Z")) || take(UInt8(ascii: "z")) { return 0 }
            let sign: Int64
            if take(UInt8(ascii: "+")) {
                sign = 1
            } else if take(UInt8(ascii: "-")) {
                sign = -1
            } else {
                return nil
            }
            guard let hours = digits(2), hours <= 23 else { return nil }
            var minutes: Int64 = 0
            if !atEnd {
                _ = take(UInt8(ascii: ":"))
                guard let m = digits(2), m <= 59 else { return nil }
                minutes = m
            }
            return sign * (hours * 60 + minutes)
        }
    }
}
