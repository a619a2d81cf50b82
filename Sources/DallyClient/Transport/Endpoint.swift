/// A route of the gateway with its path segments and query, made into a URL with every
/// segment and value percent-encoded (row ids may hold `:` and `~`, `where` values anything).
struct Endpoint: Sendable {
    var segments: [String]
    var query: [(String, String)] = []

    init(_ segments: String..., query: [(String, String)] = []) {
        self.segments = segments
        self.query = query
    }

    init(segments: [String], query: [(String, String)] = []) {
        self.segments = segments
        self.query = query
    }

    func url(base: String) -> String {
        var text = base
        for segment in segments { text += "/" + Self.escape(segment, keeping: ":@") }
        if !query.isEmpty {
            text += "?" + query.map { Self.escape($0.0) + "=" + Self.escape($0.1) }.joined(separator: "&")
        }
        return text
    }

    /// RFC 3986 unreserved characters (and those of `keeping`: a path segment keeps `:` and
    /// `@`, which row ids use, as they are: readable in logs, and older gateways read a path
    /// segment without decoding it) pass; every other byte is `%XX`.
    static func escape(_ text: String, keeping: String = "") -> String {
        var out = ""
        for byte in text.utf8 {
            if keeping.utf8.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
                continue
            }
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF")
                out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0f)])
            }
        }
        return out
    }
}
