import DallyCore

/// Reads an HTTP `Date` header (RFC 9110 §5.6.7, the IMF-fixdate every server sends:
/// `Sun, 06 Nov 1994 08:49:37 GMT`) as milliseconds since 1970, without Foundation's date
/// formatters (one answer in every exchange carries it).
///
/// ```swift
/// HTTPDate.milliseconds("Sun, 06 Nov 1994 08:49:37 GMT")   // 784111777000
/// ```
enum HTTPDate {
    static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        // "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes, fields at fixed places.
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 32, bytes[7] == 32, bytes[11] == 32,
            bytes[16] == 32, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 32,
            bytes[26...].elementsEqual("GMT".utf8),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            let month = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            (1...CivilCalendar.daysIn(month: Int64(month) + 1, year: year)).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        let days = CivilCalendar.days(year: year, month: Int64(month) + 1, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        for digit in digits {
            guard (48...57).contains(digit) else { return nil }
            value = value * 10 + Int64(digit - 48)
        }
        return value
    }
}
