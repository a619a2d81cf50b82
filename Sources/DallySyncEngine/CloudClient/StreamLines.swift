import NIOCore

/// Cuts a stream of bytes into lines as pieces of it arrive (NDJSON, PROTOCOL.md §7.3.1),
/// whatever the pieces' boundaries. Pure: fed by the notify stream, tested on its own.
///
/// ```swift
/// var lines = StreamLines(maxLine: 1 << 20)
/// for line in try lines.append(piece) { … }   // each without its "\n"
/// ```
struct StreamLines: Sendable {
    /// A line longer than this is refused: the stream is not what it should be.
    struct TooLong: Error, Sendable {
        let limit: Int
    }

    let maxLine: Int
    private var pending: [UInt8] = []

    init(maxLine: Int) { self.maxLine = maxLine }

    /// Bytes after the last newline: a line not ended yet.
    var unfinished: Int { pending.count }

    /// The lines `piece` ends, in order, without their newlines; empty lines are skipped.
    mutating func append(_ piece: ByteBuffer) throws(TooLong) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var bytes = piece.readableBytesView[...]
        while let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
            let part = bytes[..<newline]
            guard pending.count + part.count <= maxLine else { throw TooLong(limit: maxLine) }
            pending.append(contentsOf: part)
            if !pending.isEmpty { lines.append(pending) }
            pending.removeAll(keepingCapacity: true)
            bytes = bytes[bytes.index(after: newline)...]
        }
        guard pending.count + bytes.count <= maxLine else { throw TooLong(limit: maxLine) }
        pending.append(contentsOf: bytes)
        return lines
    }
}
