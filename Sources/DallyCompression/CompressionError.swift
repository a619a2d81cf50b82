/// Why a body could not be compressed.
///
/// Compression only fails on a caller mistake (a level the coding does not have) or on the
/// library itself failing, so the cases name exactly those two and carry what to log.
public enum CompressionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `level` is not a level of `coding`; the ranges are in ``Compressor/compress(_:coding:level:)``.
    case invalidLevel(Int, coding: ContentCoding)
    /// libzstd or zlib reported an error; the message is the library's own.
    case library(String)

    public var description: String {
        switch self {
        case let .invalidLevel(level, coding):
            "\(level) is not a \(coding.rawValue) compression level"
        case let .library(message):
            "compression failed: \(message)"
        }
    }
}
