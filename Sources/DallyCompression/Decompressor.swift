/// Decodes a request body with a hard limit on the decoded size.
///
/// The limit is enforced while decoding, not after: a few kilobytes of zstd or deflate can
/// expand to gigabytes, so checking the result would already be too late. Decoding costs at
/// most `maxOutput` bytes plus a fixed scratch buffer and the library's context (for zstd, a
/// window of at most 128 MiB that the frame must declare). Each call uses its own context, so
/// calls may run concurrently.
public enum Decompressor {
    /// Decodes `input`, which is coded with `coding`, refusing more than `maxOutput` bytes.
    ///
    /// A zstd body may be several frames back to back (``FramedZstd`` writes them so), each
    /// possibly compressed with a dictionary that its header names by id. Before decoding a
    /// frame, its header is read: a declared content size larger than the room left under
    /// `maxOutput` is refused without decoding, and a dictionary id is looked up with
    /// `dictionaries`. Skippable frames are skipped. Deflate and identity bodies do not use
    /// `dictionaries` (a zlib stream that needs a preset dictionary is refused as corrupt).
    ///
    /// For example, with the dictionaries a gateway has registered, by id:
    ///
    /// ```swift
    /// let json = try Decompressor.decompress(body, coding: .zstd, maxOutput: limit) { id in
    ///     registered[id]
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - maxOutput: The largest decoded body accepted, inclusive; a negative value accepts
    ///     only an empty body.
    ///   - dictionaries: The dictionary with the given id, or nil when there is none; called
    ///     once for each frame that names one, before that frame is decoded. A dictionary with
    ///     the right id but other bytes than the sender's makes the frame fail as corrupt in
    ///     the cases libzstd can detect (see ``ZstdDictionary``), so give only the one
    ///     registered under that id.
    /// - Throws: `.tooLarge(limit: maxOutput)` as soon as the decoded body would exceed the
    ///   limit, or a frame declares more than is left; `.unknownDictionary(id)` for the first
    ///   frame whose dictionary `dictionaries` does not give; `.corrupt` for an empty zstd or
    ///   deflate body, garbage, a truncated stream, or (deflate) bytes after the end of the
    ///   zlib stream.
    public static func decompress(
        _ input: UnsafeRawBufferPointer,
        coding: ContentCoding,
        maxOutput: Int,
        dictionaries: (UInt32) -> ZstdDictionary?
    ) throws(DecompressionError) -> [UInt8] {
        var output = BoundedOutput(limit: maxOutput)
        switch coding {
        case .zstd: try ZstdDecoder().decode(input, into: &output, dictionaries: dictionaries)
        case .deflate: try ZlibDecoder().decode(input, into: &output)
        case .identity: try output.append(input)
        }
        return output.bytes
    }

    /// Decodes `input`, as the buffer overload does.
    public static func decompress(
        _ input: [UInt8],
        coding: ContentCoding,
        maxOutput: Int,
        dictionaries: (UInt32) -> ZstdDictionary?
    ) throws(DecompressionError) -> [UInt8] {
        // Array.withUnsafeBytes only rethrows `any Error`; carry the typed error out in a Result.
        try input.withUnsafeBytes { bytes in
            Result { () throws(DecompressionError) in
                try decompress(bytes, coding: coding, maxOutput: maxOutput, dictionaries: dictionaries)
            }
        }.get()
    }

    /// Decodes `input` without dictionaries: a zstd frame that names one gives
    /// `.unknownDictionary`. Otherwise as the overload with dictionaries.
    public static func decompress(
        _ input: UnsafeRawBufferPointer,
        coding: ContentCoding,
        maxOutput: Int
    ) throws(DecompressionError) -> [UInt8] {
        try decompress(input, coding: coding, maxOutput: maxOutput) { _ in nil }
    }

    /// Decodes `input` without dictionaries, as the buffer overload does.
    public static func decompress(
        _ input: [UInt8],
        coding: ContentCoding,
        maxOutput: Int
    ) throws(DecompressionError) -> [UInt8] {
        try decompress(input, coding: coding, maxOutput: maxOutput) { _ in nil }
    }
}
