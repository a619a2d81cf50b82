import DallyCompression

/// How the replica keeps the body of a batch in flight: as one zstd frame at level 1.
///
/// A batch's body is kept until its answer is applied, so that a resend (after a failure, a
/// restart) carries the same bytes. Kept as JSON, a drain wrote every body twice (into the
/// WAL, then into the database file at the checkpoint) and deleted it a moment later: a
/// 5,000-row batch is ~480 KB of JSON and ~130 KB as a level-1 frame, which libzstd makes in
/// ~1 ms, less than SQLite spent on the difference (insert and delete of the body, 3.0 against
/// 0.8 ms; docs/BENCHMARKS.md). The writer, which local writes wait for, holds less for it, and
/// a box on an SD card writes a quarter of the bytes.
///
/// Level 1 because the ids that fill a batch (random UUIDs) are what its size is made of:
/// higher levels gain nothing on them (level 6: 3.57× against level 1's 3.62× on a drain's
/// batch) at 4.5 times the time.
///
/// A body kept by an older replica is its JSON; ``unpacked(_:)`` tells the two apart by the
/// first byte (a JSON body opens with `{`, a zstd frame with its magic number).
///
/// ```swift
/// let kept = KeptBody.packed(body)
/// let again = try KeptBody.unpacked(kept)  // == body
/// ```
enum KeptBody {
    static let level = 1
    /// The zstd frame magic number, as it opens a frame (RFC 8878, little-endian 0xFD2FB528).
    static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
    /// The most a kept body may decode to: far above any batch the cloud accepts.
    static let maxBody = 1 << 32

    /// The bytes to keep for `body`: its zstd frame, or the body itself in the unlikely case
    /// that libzstd fails (``unpacked(_:)`` reads either).
    static func packed(_ body: [UInt8]) -> [UInt8] {
        (try? Compressor.compress(body, coding: .zstd, level: level)) ?? body
    }

    /// The body kept as `stored`.
    ///
    /// - Throws: ``StoreError`` when a frame does not decode: the replica's file was damaged.
    static func unpacked(_ stored: [UInt8]) throws -> [UInt8] {
        guard stored.starts(with: magic) else { return stored }
        do {
            return try Decompressor.decompress(stored, coding: .zstd, maxOutput: maxBody)
        } catch {
            throw StoreError("a batch in flight kept in the replica does not decode (\(error)); the file is damaged")
        }
    }
}
