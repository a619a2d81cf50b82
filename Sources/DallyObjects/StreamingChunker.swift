/// Cuts a byte stream into chunks as it arrives, holding at most one chunk's worth of bytes.
///
/// An object being uploaded or stored is read piece by piece; the chunker finds boundaries in
/// each piece and hands out every completed chunk, in order, to be hashed and stored. Memory
/// stays flat whatever the object's size: at most `maximum` bytes are buffered, and a chunk that
/// lies wholly inside one piece is handed out straight from it, without a copy.
///
/// Boundaries depend only on the bytes, never on how they were split into ``append(_:emit:)``
/// calls: the hash state and the current chunk's length carry over from one call to the next.
///
/// FastCDC (Xia et al., "FastCDC: a Fast and Efficient Content-Defined Chunking Approach for
/// Data Deduplication", USENIX ATC 2016), as implemented here:
/// - the first `minimum` bytes of a chunk are skipped (no cut, not hashed);
/// - from there a gear hash rolls over the bytes, `h = (h << 1) &+ gear[byte]` (``GearTable``),
///   starting from 0 at the `minimum`-th byte; its top bits see the last 64 bytes;
/// - normalized chunking, level 2: until the chunk reaches `average` bytes a cut needs the top
///   `log2(average) + 2` bits of `h` to be zero (a stricter mask), after that only the top
///   `log2(average) - 2` (a looser one), which bunches chunk sizes around `average`;
/// - a cut falls after the byte whose hash met the mask; at `maximum` bytes a cut is forced.
///
/// Do not change any of this for existing deployments: see ``GearTable`` on why boundaries
/// must stay stable across versions.
///
/// If `emit` throws, the chunker is left mid-chunk: abandon the stream.
public struct StreamingChunker: Sendable {
    private let method: ChunkingParameters.Method
    private let minimum: Int
    private let average: Int
    private let maximum: Int
    /// Applied while the chunk is shorter than `average`.
    private let strictMask: UInt64
    /// Applied from `average` on.
    private let looseMask: UInt64

    /// The gear hash of the current chunk's bytes past `minimum`.
    private var hash: UInt64 = 0
    /// Bytes of the current chunk seen so far.
    private var length = 0
    /// The current chunk's bytes that arrived in earlier calls (≤ `maximum`).
    private var pending: [UInt8] = []

    /// A chunker for `parameters`; sizes out of range are clamped (see
    /// ``ChunkingParameters/validate()``), so that no input makes it fail.
    public init(_ parameters: ChunkingParameters = .default) {
        let p = parameters.clamped
        method = p.method
        minimum = p.minimum
        average = p.average
        maximum = p.maximum
        let bits = Self.log2Rounded(p.average)
        strictMask = Self.topBits(bits + 2)
        looseMask = Self.topBits(bits - 2)
    }

    /// Feeds bytes; calls `emit` for each chunk completed (bytes of one chunk, in order).
    ///
    /// The buffer given to `emit` is valid only during the call.
    public mutating func append(
        _ bytes: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let input = base.assumingMemoryBound(to: UInt8.self)
        var start = 0  // where the current chunk's bytes from this piece begin
        var position = 0
        try GearTable.values.withUnsafeBufferPointer { table in
            // A 256-entry table: its base address is never nil.
            guard let gear = table.baseAddress else { return }
            while position < bytes.count {
                guard let cut = scan(input + position, count: bytes.count - position, gear: gear) else { break }
                position += cut
                let tail = UnsafeRawBufferPointer(start: base + start, count: position - start)
                if pending.isEmpty {
                    try emit(tail)
                } else {
                    pending.append(contentsOf: tail)
                    try pending.withUnsafeBytes { try emit($0) }
                    pending.removeAll(keepingCapacity: true)
                }
                start = position
            }
        }
        if start < bytes.count {
            if pending.capacity < maximum { pending.reserveCapacity(maximum) }
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: bytes.count - start))
        }
    }

    /// Ends the stream; emits the last (possibly short) chunk, if any bytes remain.
    ///
    /// The chunker is then ready for a new stream.
    public mutating func finish(emit: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        defer {
            pending = []
            hash = 0
            length = 0
        }
        guard !pending.isEmpty else { return }
        try pending.withUnsafeBytes { try emit($0) }
    }

    /// Convenience for tests/benchmarks: the chunk lengths of a whole buffer.
    public static func boundaries(of bytes: [UInt8], parameters: ChunkingParameters) -> [Int] {
        var chunker = StreamingChunker(parameters)
        var lengths: [Int] = []
        bytes.withUnsafeBytes { chunker.append($0) { lengths.append($0.count) } }
        chunker.finish { lengths.append($0.count) }
        return lengths
    }

    // MARK: Boundary scan

    /// Scans `count` bytes continuing the current chunk; returns how many of them complete it
    /// (and resets for the next chunk), or nil when all were taken and the chunk goes on.
    @inline(__always)
    private mutating func scan(_ p: UnsafePointer<UInt8>, count: Int, gear: UnsafePointer<UInt64>) -> Int? {
        let seen = length
        if method == .fixed {
            let take = min(count, average - seen)
            if seen + take == average { return cut() }
            length = seen + take
            return nil
        }
        // The bytes before `minimum` are neither hashed nor a place to cut.
        var i = min(count, max(0, minimum - seen))
        var h = hash
        let strictEnd = min(count, max(i, average - seen))
        if Self.roll(p, from: &i, to: strictEnd, hash: &h, mask: strictMask, gear: gear) { return cut(i) }
        let looseEnd = min(count, max(i, maximum - seen))
        if Self.roll(p, from: &i, to: looseEnd, hash: &h, mask: looseMask, gear: gear) { return cut(i) }
        if seen + i >= maximum { return cut(i) }
        hash = h
        length = seen + i
        return nil
    }

    /// Rolls the gear hash over `p[i..<end]` until `h & mask` is zero: true with `i` just past
    /// that byte, or false with `i` at `end`.
    ///
    /// Four bytes a step: `h` after each of them is computed from `h` before the step and the
    /// four gear values, so that the step's dependency chain is one shift and one add rather
    /// than four of each (about 1.6× faster than byte by byte; the same hashes, the same cuts).
    @inline(__always)
    private static func roll(
        _ p: UnsafePointer<UInt8>, from i: inout Int, to end: Int, hash h: inout UInt64, mask: UInt64,
        gear: UnsafePointer<UInt64>
    ) -> Bool {
        while i + 4 <= end {
            let g0 = gear[Int(p[i])]
            let g1 = gear[Int(p[i + 1])]
            let g2 = gear[Int(p[i + 2])]
            let g3 = gear[Int(p[i + 3])]
            let s1 = g0 << 1 &+ g1
            let s2 = s1 << 1 &+ g2
            let s3 = s2 << 1 &+ g3
            let h1 = h << 1 &+ g0
            let h2 = h << 2 &+ s1
            let h3 = h << 3 &+ s2
            let h4 = h << 4 &+ s3
            if h1 & mask == 0 || h2 & mask == 0 || h3 & mask == 0 || h4 & mask == 0 {
                if h1 & mask == 0 {
                    (h, i) = (h1, i + 1)
                } else if h2 & mask == 0 {
                    (h, i) = (h2, i + 2)
                } else if h3 & mask == 0 {
                    (h, i) = (h3, i + 3)
                } else {
                    (h, i) = (h4, i + 4)
                }
                return true
            }
            (h, i) = (h4, i + 4)
        }
        while i < end {
            h = (h << 1) &+ gear[Int(p[i])]
            i += 1
            if h & mask == 0 { return true }
        }
        return false
    }

    @inline(__always)
    private mutating func cut(_ taken: Int) -> Int {
        hash = 0
        length = 0
        return taken
    }

    @inline(__always)
    private mutating func cut() -> Int {
        let taken = average - length
        hash = 0
        length = 0
        return taken
    }

    /// A mask of the top `bits` bits of a 64-bit hash (bits clamped to 0…63): the high bits of a
    /// gear hash depend on the most bytes, the low bits only on the last few.
    static func topBits(_ bits: Int) -> UInt64 {
        let n = min(max(bits, 0), 63)
        return n == 0 ? 0 : ~UInt64(0) << UInt64(64 - n)
    }

    /// log2(n) rounded to the nearest integer, for n ≥ 1.
    static func log2Rounded(_ n: Int) -> Int {
        let floor = Int.bitWidth - 1 - max(n, 1).leadingZeroBitCount
        // Round up when n ≥ 2^floor · √2.
        let threshold = Double(1 << floor) * 2.0.squareRoot()
        return Double(n) >= threshold ? floor + 1 : floor
    }
}
