/// Compresses a document given in pieces as concatenated zstd frames, each piece with the
/// dictionary that suits it.
///
/// RFC 8878 lets a zstd body be any number of frames back to back, decoded as the
/// concatenation of their contents; each frame's header may name the dictionary it needs. So a
/// batch of several tables can compress each table's section with that table's dictionary and
/// still be one ordinary zstd body to the receiver, which decodes it with
/// ``Decompressor/decompress(_:coding:maxOutput:dictionaries:)``.
///
/// For example, a batch whose envelope is not worth a dictionary and whose one section is:
///
/// ```swift
/// let body = try FramedZstd.compress(
///     segments: [
///         .init(json[..<sectionsStart]),
///         .init(json[sectionsStart..<sectionsEnd], dictionary: telemetry),
///         .init(json[sectionsEnd...]),
///     ],
///     level: FramedZstd.defaultLevel)
/// ```
///
/// Every frame records its content size (so a receiver can refuse an oversized frame before
/// decoding it) and the id of its dictionary, and carries no checksum. Where compressing a
/// block would not make it smaller, libzstd stores it raw, so a frame costs at most its header
/// and 3 bytes per 128 KiB block more than its content.
public enum FramedZstd {
    /// A piece of the document, and the dictionary to compress it with.
    public struct Segment: Sendable {
        /// The piece's bytes; a slice, so pieces of one buffer are not copied.
        public var bytes: ArraySlice<UInt8>
        /// The dictionary to compress the piece with, or nil when it has none. A piece without
        /// one may be compressed in a neighbour's frame, with that neighbour's dictionary.
        public var dictionary: ZstdDictionary?

        public init(_ bytes: ArraySlice<UInt8>, dictionary: ZstdDictionary? = nil) {
            self.bytes = bytes
            self.dictionary = dictionary
        }

        public init(_ bytes: [UInt8], dictionary: ZstdDictionary? = nil) {
            self.init(bytes[...], dictionary: dictionary)
        }
    }

    /// The level to compress batch bodies at when nothing else is configured: 6.
    ///
    /// Measured by `dally-bench codec` (libzstd 1.5.4) on sections with 4 KiB dictionaries:
    /// against level 3 (libzstd's default, and ``Compressor``'s), level 6 makes 10-row sections
    /// 5% smaller and a 1 MiB batch 9% smaller, at 2.3 to 2.9 times the compression time (a
    /// 1 MiB batch in about 13 ms of one core, a 1 KB section in about 25 µs); decompression
    /// speed does not depend on the level. Level 9 saves 1% more at 1.6 times level 6's time;
    /// level 19 5 to 10% more at 5 to 13 times.
    public static let defaultLevel = 6

    /// The most bytes a frame compressed with `level` and a dictionary should hold: 16 KiB for
    /// levels 1 to 3, no limit for the others.
    ///
    /// Measured by `dally-bench codec` (libzstd 1.5.4): at levels 1 to 3, a section of more than
    /// about 16 KB compresses 1 to 8% worse with its dictionary than without (libzstd then
    /// compresses with the small tables its prepared dictionary was made with) and more slowly;
    /// at negative levels and from level 4 up, a dictionary helps or is neutral at every size.
    /// Re-measure after a libzstd upgrade.
    public static func defaultDictionaryLimit(level: Int) -> Int {
        (1...3).contains(level) ? 16 * 1024 : .max
    }

    /// Compresses `segments`, in order, into one zstd body whose decoded content is their
    /// concatenation.
    ///
    /// Frames are cut where the dictionary changes, not at every segment: each frame costs a
    /// header (about 10 bytes) and starts without the history of the one before. So:
    ///
    /// - a segment larger than `dictionaryLimit` is compressed without its dictionary;
    /// - a segment without a dictionary joins the frame before it (or after it, when it comes
    ///   first), whose dictionary can only help it, and consecutive segments with the same
    ///   dictionary (the same ``ZstdDictionary/id``) share a frame;
    /// - but a frame with a dictionary never grows past `dictionaryLimit` bytes: a segment
    ///   that would take it past starts a new frame;
    /// - empty segments are left out, but a body of only empty segments is one empty frame,
    ///   so that it is still a valid zstd body (an empty body is not).
    ///
    /// One compression context serves all the frames.
    ///
    /// - Parameters:
    ///   - level: A zstd level, as for ``Compressor/compress(_:coding:level:)``. Dictionaries
    ///     are prepared for it on first use and kept (see ``ZstdDictionary``).
    ///   - dictionaryLimit: See above; nil (the default) for ``defaultDictionaryLimit(level:)``.
    /// - Throws: `.invalidLevel`; `.library` if libzstd fails.
    public static func compress(
        segments: [Segment],
        level: Int,
        dictionaryLimit: Int? = nil
    ) throws(CompressionError) -> [UInt8] {
        let encoder = try ZstdEncoder(level: level)
        var output: [UInt8] = []
        let limit = dictionaryLimit ?? defaultDictionaryLimit(level: level)
        for frame in plan(segments, dictionaryLimit: limit) {
            // The CDict belongs to the dictionary object: keep it alive until the frame ends.
            try withExtendedLifetime(frame.dictionary) { () throws(CompressionError) in
                try encoder.startFrame(size: frame.size, dictionary: try frame.dictionary?.compressionDictionary(level: level))
                for (index, part) in frame.parts.enumerated() {
                    let flush: FlushMode = index == frame.parts.count - 1 ? .end : .none
                    try part.withUnsafeBytes { bytes in
                        Result { () throws(CompressionError) in try encoder.encode(bytes, flush: flush, into: &output) }
                    }.get()
                }
            }
        }
        return output
    }

    /// One frame to write: its dictionary and the segments' bytes it holds.
    struct Frame {
        var dictionary: ZstdDictionary?
        var parts: [ArraySlice<UInt8>]
        var size: Int

        init(_ bytes: ArraySlice<UInt8>, dictionary: ZstdDictionary?) {
            (self.dictionary, parts, size) = (dictionary, [bytes], bytes.count)
        }

        mutating func append(_ bytes: ArraySlice<UInt8>) {
            parts.append(bytes)
            size += bytes.count
        }
    }

    /// The frames `segments` are written as, and the dictionary of each; see
    /// ``compress(segments:level:dictionaryLimit:)``.
    static func plan(_ segments: [Segment], dictionaryLimit limit: Int) -> [Frame] {
        var frames: [Frame] = []
        for segment in segments where !segment.bytes.isEmpty {
            let bytes = segment.bytes
            let wanted = bytes.count <= limit ? segment.dictionary : nil
            guard var last = frames.popLast() else {
                frames.append(Frame(bytes, dictionary: wanted))
                continue
            }
            let fits = last.size + bytes.count <= limit
            switch (last.dictionary, wanted) {
            case (nil, nil):
                last.append(bytes)
                frames.append(last)
            case (nil, .some(let dictionary)) where fits:
                // A frame so far without a dictionary takes the first one a segment brings.
                last.dictionary = dictionary
                last.append(bytes)
                frames.append(last)
            case (.some(let current), _) where fits && (wanted == nil || wanted?.id == current.id):
                last.append(bytes)
                frames.append(last)
            default:
                frames.append(last)
                frames.append(Frame(bytes, dictionary: wanted))
            }
        }
        if frames.isEmpty { frames.append(Frame([], dictionary: nil)) }
        return frames
    }
}
