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
    /// - Parameter maxOutput: The largest decoded body accepted, inclusive; a negative value
    ///   accepts only an empty body.
    /// - Throws: `.tooLarge(limit: maxOutput)` as soon as the decoded body would exceed the limit;
    ///   `.corrupt` for an empty zstd or deflate body, garbage, a truncated stream, or (deflate)
    ///   bytes after the end of the zlib stream. Concatenated zstd frames are accepted, as the
    ///   zstd format allows.
    public static func decompress(
        _ input: UnsafeRawBufferPointer,
        coding: ContentCoding,
        maxOutput: Int
    ) throws(DecompressionError) -> [UInt8] {
        var output = BoundedOutput(limit: maxOutput)
        switch coding {
        case .zstd: try ZstdDecoder().decode(input, into: &output)
        case .deflate: try ZlibDecoder().decode(input, into: &output)
        case .identity: try output.append(input)
        }
        return output.bytes
    }

    /// Decodes `input`, as the buffer overload does.
    public static func decompress(
        _ input: [UInt8],
        coding: ContentCoding,
        maxOutput: Int
    ) throws(DecompressionError) -> [UInt8] {
        // Array.withUnsafeBytes only rethrows `any Error`; carry the typed error out in a Result.
        try input.withUnsafeBytes { bytes in
            Result { () throws(DecompressionError) in try decompress(bytes, coding: coding, maxOutput: maxOutput) }
        }.get()
    }
}
