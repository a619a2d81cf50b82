import CZstd

/// Compresses a whole body in one call.
///
/// One-shot because Dally's bodies are built in memory before they are sent; each call uses its
/// own library context, so there is no shared state and calls may run concurrently.
public enum Compressor {
    /// The version of the libzstd Dally runs with, such as `1.5.4`: for logs and benchmarks.
    public static var zstdVersion: String { String(cString: ZSTD_versionString()) }

    /// Compresses `input` with `coding`.
    ///
    /// - Parameters:
    ///   - level: zstd accepts its negative fast levels and 1...19 (0 is refused: libzstd reads it
    ///     as "default", deflate as "store"; 20...22 need too much memory for a server);
    ///     deflate accepts 0...9. Ignored for identity. See ``defaultLevel(for:)``.
    /// - Returns: A complete zstd frame (with the content size in its header, so decoders can
    ///   refuse it early), a zlib-format stream (what HTTP calls deflate), or the input itself.
    /// - Throws: `.invalidLevel` for a level outside those ranges; `.library` if the library fails.
    public static func compress(
        _ input: UnsafeRawBufferPointer,
        coding: ContentCoding,
        level: Int
    ) throws(CompressionError) -> [UInt8] {
        var output: [UInt8] = []
        switch coding {
        case .zstd: try ZstdEncoder(level: level).encode(input, flush: .end, into: &output)
        case .deflate: try ZlibEncoder(level: level).encode(input, flush: .end, into: &output)
        case .identity: output = Array(input)
        }
        return output
    }

    /// Compresses `input` with `coding`, as the buffer overload does.
    public static func compress(
        _ input: [UInt8],
        coding: ContentCoding,
        level: Int
    ) throws(CompressionError) -> [UInt8] {
        // Array.withUnsafeBytes only rethrows `any Error`; carry the typed error out in a Result.
        try input.withUnsafeBytes { bytes in
            Result { () throws(CompressionError) in try compress(bytes, coding: coding, level: level) }
        }.get()
    }

    /// The level to use when nothing else is configured: each library's own default
    /// (zstd 3, zlib 6), the usual balance of speed and ratio. 0 for identity.
    public static func defaultLevel(for coding: ContentCoding) -> Int {
        switch coding {
        case .zstd: 3
        case .deflate: 6
        case .identity: 0
        }
    }
}
