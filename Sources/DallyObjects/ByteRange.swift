/// Reading the HTTP `Range` header of an object download (RFC 9110 §14).
///
/// Pure: turns the header and the object's size into what to send, so that the gateway's and the
/// cloud's HTTP layers answer ranges alike and the rules are tested without a server.
///
/// Choices, all within what RFC 9110 allows:
/// - One range only. A header with several ranges is ignored (``Outcome/whole``, a 200): a server
///   may ignore `Range` (§14.2), and multipart/byteranges buys little for objects that clients
///   fetch whole or resume from one offset.
/// - A header that is not a `bytes` range, or that does not parse (letters, a missing `-`, a last
///   position before the first, a `+` or a sign), is ignored: "a server MAY ignore … an invalid
///   ranges-specifier" (§14.2), and ignoring is safer for a client than a 416 it did not expect.
/// - The unit is matched case-insensitively (§14.1); optional whitespace is accepted around the
///   header, around `=`, around the range and around its `-`.
/// - A last position past the end is clamped to the last byte (§14.1.1); positions too large for
///   an `Int64` are read as `Int64.max`, so they clamp or miss like any large number.
/// - `bytes=a-` and `bytes=a-b` are satisfiable iff `a` < size; `bytes=-n` iff n > 0. On an
///   empty object every range is unsatisfiable but a non-zero suffix, which RFC 9110 counts as
///   satisfiable yet selects nothing: that one gets the whole (empty) object, a 200.
public enum ByteRange {
    /// What to send for a `Range` header.
    public enum Outcome: Sendable, Hashable {
        /// The whole object, status 200: no header, or one to ignore.
        case whole
        /// These bytes (offsets within the object, both ends included), status 206 with
        /// `Content-Range: bytes a-b/size` (``contentRange(_:size:)``).
        case partial(ClosedRange<Int64>)
        /// Status 416 with `Content-Range: bytes */size` (``unsatisfiedContentRange(size:)``).
        case unsatisfiable
    }

    /// What to send for `header` (the `Range` field value) on an object of `size` bytes.
    ///
    /// For example, on a 1000-byte object:
    /// ```swift
    /// ByteRange.parse("bytes=0-499", size: 1000)   // .partial(0...499)
    /// ByteRange.parse("bytes=900-", size: 1000)    // .partial(900...999)
    /// ByteRange.parse("bytes=-100", size: 1000)    // .partial(900...999)
    /// ByteRange.parse("bytes=1000-", size: 1000)   // .unsatisfiable
    /// ByteRange.parse("bytes=0-1,5-9", size: 1000) // .whole (several ranges: ignored)
    /// ```
    public static func parse(_ header: String, size: Int64) -> Outcome {
        let size = max(size, 0)
        let text = Substring(header)
        guard let equals = text.firstIndex(of: "=") else { return .whole }
        guard trimmed(text[..<equals]).lowercased() == "bytes" else { return .whole }
        let specs = text[text.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false)
            .map(trimmed).filter { !$0.isEmpty }
        guard specs.count == 1, let spec = specs.first, let dash = spec.firstIndex(of: "-") else { return .whole }
        let firstText = trimmed(spec[..<dash])
        let lastText = trimmed(spec[spec.index(after: dash)...])

        if firstText.isEmpty {
            // bytes=-n: the last n bytes.
            guard let suffix = number(lastText) else { return .whole }
            guard suffix > 0 else { return .unsatisfiable }
            guard size > 0 else { return .whole }
            return .partial(max(0, size - suffix)...(size - 1))
        }
        guard let first = number(firstText) else { return .whole }
        var last = Int64.max
        if !lastText.isEmpty {
            guard let given = number(lastText), given >= first else { return .whole }
            last = given
        }
        guard first < size else { return .unsatisfiable }
        return .partial(first...min(last, size - 1))
    }

    /// 1*DIGIT as an Int64, saturating at `Int64.max`; nil for anything else.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for c in text.utf8 {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(c - UInt8(ascii: "0")))
            value = overflow1 || overflow2 ? Int64.max : sum
        }
        return value
    }

    /// Without optional whitespace (spaces and tabs) at either end.
    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = text.firstIndex(where: { !isSpace($0) }), let end = text.lastIndex(where: { !isSpace($0) })
        else { return text[text.endIndex...] }
        return text[start...end]
    }
}
