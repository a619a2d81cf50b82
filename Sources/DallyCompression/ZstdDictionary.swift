import CZstd
import Synchronization

/// A zstd dictionary: content and entropy tables shared in advance by a sender and a receiver,
/// so that a small message can refer to what the dictionary already holds instead of carrying it.
///
/// A Dally batch section of a few rows compresses poorly on its own (its table name, column
/// names and value patterns appear once each). Measured by `dally-bench codec` at level 6, a
/// one-row section shrinks to 81% of its JSON alone and to 29% with a 4 KiB dictionary trained
/// on earlier sections of its table; a ten-row section to 40% and 28%. The frame header of such a
/// message names the dictionary by ``id``, and the receiver must hold the same bytes under that
/// id: ``FramedZstd/compress(segments:level:dictionaryLimit:)`` writes the id,
/// ``Decompressor/decompress(_:coding:maxOutput:dictionaries:)`` looks it up.
///
/// Only dictionaries in the zstd dictionary format (magic number 0xEC30A437, then the id, the
/// entropy tables and the content), as ``train(samples:capacity:id:level:method:)`` and
/// `zstd --train` make them, are accepted. A raw-content dictionary (any bytes used as a
/// prefix) is refused: it has no id, so a frame compressed with it cannot say it needs it, and
/// a receiver would decode that frame without it into an error at best.
///
/// For example:
///
/// ```swift
/// let dictionary = try ZstdDictionary(id: 7, bytes: storedBytes)
/// let body = try FramedZstd.compress(
///     segments: [.init(envelope), .init(section, dictionary: dictionary), .init(closing)], level: 6)
/// let json = try Decompressor.decompress(body, coding: .zstd, maxOutput: 1 << 26) { id in
///     id == dictionary.id ? dictionary : nil
/// }
/// ```
///
/// An id must name one content forever. Frames carry no checksum, so a receiver that holds
/// other bytes under the id a frame names cannot always tell: libzstd refuses such a frame as
/// corrupt in most cases, but measured on telemetry sections with two dictionaries trained on
/// different traffic under one id, 13 of 1,800 one-row sections decoded without an error into
/// wrong bytes (none of 3,600 sections of 10 or 100 rows did). The JSON parser catches most of
/// those, not all.
///
/// The prepared forms libzstd works with (a `ZSTD_DDict`, and a `ZSTD_CDict` per compression
/// level) are built on first use and kept until the dictionary is released, so one instance
/// should be kept and shared (it is `Sendable`, and libzstd allows any number of threads to use
/// the prepared forms at once) rather than rebuilt per message.
public final class ZstdDictionary: Sendable {
    /// The ids Dally accepts: 0 means "no dictionary" in a frame header, and the zstd format
    /// keeps 2^31 and above for a future public registry. It keeps 1...32767 too, but only
    /// for dictionaries distributed in public; between a gateway and its cloud they are fine,
    /// and cheaper: a frame header spends 1 byte on ids below 256, 2 below 65536, 4 above.
    public static let validIDs: ClosedRange<UInt32> = 1...0x7FFF_FFFF

    /// The id in the dictionary's header, which frames compressed with it carry.
    public let id: UInt32
    /// The dictionary in the zstd dictionary format: what to store and send to the other side.
    public let bytes: [UInt8]

    /// libzstd's prepared dictionaries, built on first use.
    private let prepared = Mutex(Prepared())

    /// Wraps `bytes`, a zstd-format dictionary whose header must carry `id`.
    ///
    /// Checks the magic number, the id and that the entropy tables parse, so a dictionary
    /// that passes here is one libzstd will load.
    ///
    /// - Throws: `.reservedDictionaryID` for 0 or 2^31 and above; `.invalidDictionary` for bytes
    ///   without the dictionary magic number (raw content), another id in the header, or entropy
    ///   tables libzstd cannot read.
    public init(id: UInt32, bytes: [UInt8]) throws(CompressionError) {
        guard Self.validIDs.contains(id) else { throw .reservedDictionaryID(id) }
        let magic = bytes.prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard bytes.count >= 8, magic == ZSTD_MAGIC_DICTIONARY else {
            throw .invalidDictionary(
                "no zstd dictionary header (magic number 0xEC30A437); raw-content dictionaries have no id and are not accepted")
        }
        let (named, header) = bytes.withUnsafeBytes { raw in
            (ZDICT_getDictID(raw.baseAddress, raw.count), ZDICT_getDictHeaderSize(raw.baseAddress, raw.count))
        }
        guard named == id else { throw .invalidDictionary("its header carries id \(named), not \(id)") }
        guard ZDICT_isError(header) == 0 else {
            throw .invalidDictionary("its entropy tables do not load: " + LibZstd.errorName(header))
        }
        self.id = id
        self.bytes = bytes
    }

    deinit {
        prepared.withLock { prepared in
            if let decompression = prepared.decompression { ZSTD_freeDDict(decompression.pointer) }
            for compression in prepared.compression.values { ZSTD_freeCDict(compression.pointer) }
        }
    }

    /// The `ZSTD_CDict` for `level`, built on first use. Valid while `self` is alive.
    ///
    /// libzstd takes the compression parameters of a dictionary-compressed frame from the
    /// CDict (for inputs under 128 KiB), which is why there is one per level.
    func compressionDictionary(level: Int) throws(CompressionError) -> OpaquePointer {
        let handle = prepared.withLock { prepared -> Handle? in
            if let existing = prepared.compression[level] { return existing }
            let made = bytes.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, Int32(level)) }
            guard let made else { return nil }
            prepared.compression[level] = Handle(pointer: made)
            return Handle(pointer: made)
        }
        guard let handle else { throw .library("zstd: cannot prepare dictionary \(id) for level \(level)") }
        return handle.pointer
    }

    /// The `ZSTD_DDict`, built on first use. Valid while `self` is alive.
    func decompressionDictionary() throws(DecompressionError) -> OpaquePointer {
        let handle = prepared.withLock { prepared -> Handle? in
            if let existing = prepared.decompression { return existing }
            let made = bytes.withUnsafeBytes { ZSTD_createDDict($0.baseAddress, $0.count) }
            prepared.decompression = made.map { Handle(pointer: $0) }
            return prepared.decompression
        }
        // The bytes were checked in init, so only a failed allocation gets here.
        guard let handle else { throw .corrupt("zstd: cannot prepare dictionary \(id) for decoding") }
        return handle.pointer
    }

    /// A pointer to a prepared dictionary. libzstd documents CDicts and DDicts as read-only once
    /// built, safe to use from any number of threads at once, so handing one out is safe.
    private struct Handle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct Prepared {
        var decompression: Handle?
        var compression: [Int: Handle] = [:]
    }
}
