/// A batch body cut into the pieces that are compressed as separate zstd frames, each with the
/// dictionary of its table (see `docs/PROTOCOL.md`, framed bodies).
///
/// The pieces are consecutive and cover the whole body, so decoding the frames one after the
/// other gives back the body byte for byte: the cloud parses, fingerprints and stores exactly
/// what it would without framing. The envelope (`{"batch":…,"sections":[`) goes with the first
/// section, and `]}` with the last, so a batch of one table is a single frame.
public struct BatchSegments: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        /// The section's table, nil for a body without sections (a pure pull).
        public var table: String?
        /// Byte offsets into the body.
        public var range: Range<Int>

        public init(table: String?, range: Range<Int>) {
            self.table = table
            self.range = range
        }
    }

    public var segments: [Segment]

    /// Cuts `body`, a batch as ``BatchRequest/encode()`` writes it (compact JSON, `sections`
    /// last), at its sections. A body of another shape is one segment without a table.
    public static func cut(_ body: [UInt8]) -> BatchSegments {
        let whole = BatchSegments(segments: [Segment(table: nil, range: 0..<body.count)])
        let marker = Array(#","sections":["#.utf8)
        guard let open = Self.find(marker, in: body) else { return whole }
        var starts: [(offset: Int, table: String)] = []
        var depth = 0
        var inString = false
        var escaped = false
        var index = open + marker.count
        // Walk the sections array, noting where each element object starts.
        while index < body.count {
            let byte = body[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                if depth == 0, byte == UInt8(ascii: "{") {
                    guard let table = Self.table(at: index, in: body) else { return whole }
                    starts.append((index, table))
                }
                depth += 1
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                if depth == 0 { break }  // the end of the sections array
                depth -= 1
            }
            index += 1
        }
        guard !starts.isEmpty else { return whole }
        var segments: [Segment] = []
        for (i, start) in starts.enumerated() {
            let from = i == 0 ? 0 : start.offset - 1  // the comma before a section goes with it
            let to = i + 1 < starts.count ? starts[i + 1].offset - 1 : body.count
            segments.append(Segment(table: start.table, range: from..<to))
        }
        return BatchSegments(segments: segments)
    }

    /// The table of the section object starting at `offset`: `{"table":"name",…`.
    private static func table(at offset: Int, in body: [UInt8]) -> String? {
        let prefix = Array(#"{"table":""#.utf8)
        guard body.count > offset + prefix.count, Array(body[offset..<offset + prefix.count]) == prefix else {
            return nil
        }
        let nameStart = offset + prefix.count
        // Table names are ASCII identifiers: no escapes to handle.
        guard let end = body[nameStart...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: body[nameStart..<end], as: UTF8.self)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        // The marker can only appear inside a string as `\",\"sections\":[`… which has escapes,
        // so the first plain match is the member itself.
        outer: for start in 0...(haystack.count - needle.count) {
            for k in 0..<needle.count where haystack[start + k] != needle[k] { continue outer }
            return start
        }
        return nil
    }
}
