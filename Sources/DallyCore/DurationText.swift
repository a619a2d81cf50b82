/// Durations as written in the configuration and in query strings: `250ms`, `30s`, `5m`, `1h`,
/// `1h30m`, `2d`.
public enum DurationText {
    /// Parses a duration such as `"1h30m"`; nil when the text is not one.
    ///
    /// A number needs a unit (`ms`, `s`, `m`, `h`, `d`); units must go from larger to smaller,
    /// each at most once; the total must be below 10 years.
    public static func parse(_ text: String) -> Duration? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        var index = 0
        var totalMillis: Int64 = 0
        var lastRank = Int.max
        while index < bytes.count {
            var number: Int64 = 0
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                number = number * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
                if number > 1_000_000_000 { return nil }
            }
            guard index > start else { return nil }
            let unitStart = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "a"), bytes[index] <= UInt8(ascii: "z") { index += 1 }
            let unit = String(decoding: bytes[unitStart..<index], as: UTF8.self)
            let (rank, millis): (Int, Int64)
            switch unit {
            case "d": (rank, millis) = (5, 86_400_000)
            case "h": (rank, millis) = (4, 3_600_000)
            case "m": (rank, millis) = (3, 60_000)
            case "s": (rank, millis) = (2, 1_000)
            case "ms": (rank, millis) = (1, 1)
            default: return nil
            }
            guard rank < lastRank else { return nil }
            lastRank = rank
            totalMillis += number * millis
        }
        guard totalMillis < 10 * 365 * 86_400_000 else { return nil }
        return .milliseconds(totalMillis)
    }

    /// Formats a duration the way the configuration writes it, e.g. `1h30m`, `250ms`.
    public static func format(_ duration: Duration) -> String {
        var millis = duration.milliseconds
        if millis == 0 { return "0s" }
        var parts = ""
        for (unit, size) in [("d", Int64(86_400_000)), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)]
        where millis >= size {
            parts += "\(millis / size)\(unit)"
            millis %= size
        }
        return parts
    }

    /// The help text used in error messages.
    public static let expected = "a duration such as 250ms, 30s, 5m, 1h or 1h30m"
}

extension Duration {
    /// This duration in whole milliseconds, rounded down.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
