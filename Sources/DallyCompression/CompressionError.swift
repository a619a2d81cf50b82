/// Why a body could not be compressed, or a dictionary could not be made.
///
/// Compression only fails on a caller mistake (a level the coding does not have, a dictionary
/// that is not one) or on the library itself failing, so the cases name exactly those and
/// carry what to log.
public enum CompressionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `level` is not a level of `coding`; the ranges are in ``Compressor/compress(_:coding:level:)``.
    case invalidLevel(Int, coding: ContentCoding)
    /// libzstd or zlib reported an error; the message is the library's own.
    case library(String)
    /// A dictionary id the zstd format reserves: 0 means "no dictionary" in a frame header and
    /// 2^31 and above are kept for a future registry. See ``ZstdDictionary/validIDs``.
    case reservedDictionaryID(UInt32)
    /// The bytes given as a dictionary are not a zstd dictionary with the expected id; the
    /// message says what is wrong with them.
    case invalidDictionary(String)
    /// Too little to train a dictionary from: `samples` samples of `bytes` bytes in all, where
    /// training needs at least `neededSamples` samples and `neededBytes` bytes.
    /// See ``ZstdDictionary/train(samples:capacity:id:level:method:)``.
    case notEnoughSamples(samples: Int, bytes: Int, neededSamples: Int, neededBytes: Int)

    public var description: String {
        switch self {
        case let .invalidLevel(level, coding):
            "\(level) is not a \(coding.rawValue) compression level"
        case let .library(message):
            "compression failed: \(message)"
        case let .reservedDictionaryID(id):
            "dictionary id \(id) is reserved by the zstd format; use 1 to \(ZstdDictionary.validIDs.upperBound)"
        case let .invalidDictionary(reason):
            "not a usable zstd dictionary: \(reason)"
        case let .notEnoughSamples(samples, bytes, neededSamples, neededBytes):
            "too little to train a dictionary from: \(samples) samples of \(bytes) bytes in all; "
                + "needs at least \(neededSamples) samples and \(neededBytes) bytes "
                + "(about 100 times the dictionary's capacity trains well)"
        }
    }
}
