import Crypto
import Foundation

/// The SHA-256 of some bytes: what names a chunk and an object.
///
/// Chunks are stored, asked for and deduplicated by this hash, so that identical bytes are kept
/// and sent once; an object's hash is the SHA-256 of its whole content (what `sha256sum`
/// prints), so a client can check a download without knowing how it was chunked. Written as
/// 64 lowercase hex digits everywhere a person or a URL sees it.
public struct ContentHash: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// The number of digest bytes, and of hex digits in ``hex``.
    public static let byteCount = 32
    public static let hexCount = 64

    /// - Precondition: `bytes` holds 32 bytes (internal callers only; outside input goes
    ///   through ``init(hex:)`` or ``init(digest:)``).
    init(uncheckedBytes bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Reads a 32-byte digest; nil for any other length.
    public init?(digest: some Collection<UInt8>) {
        guard digest.count == Self.byteCount else { return nil }
        self.bytes = Array(digest)
    }

    /// Reads 64 hex digits (either case); nil for anything else, so that a hash taken from a
    /// URL or a body can never name something outside the stores.
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == Self.hexCount else { return nil }
        var bytes = [UInt8](repeating: 0, count: Self.byteCount)
        for i in 0..<Self.byteCount {
            guard let high = Self.nibble(utf8[2 * i]), let low = Self.nibble(utf8[2 * i + 1]) else { return nil }
            bytes[i] = high << 4 | low
        }
        self.bytes = bytes
    }

    /// The hash of `bytes`.
    public static func of(_ bytes: some DataProtocol) -> ContentHash {
        ContentHash(uncheckedBytes: Array(SHA256.hash(data: bytes)))
    }

    /// The hash of raw memory.
    public static func of(_ buffer: UnsafeRawBufferPointer) -> ContentHash {
        var hasher = SHA256()
        hasher.update(bufferPointer: buffer)
        return ContentHash(uncheckedBytes: Array(hasher.finalize()))
    }

    /// 64 lowercase hex digits.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(Self.hexCount)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { hex }

    public static func < (lhs: ContentHash, rhs: ContentHash) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Hashes a stream of bytes piece by piece: an object's hash while it is being received.
public struct StreamingHash: Sendable {
    private var hasher = SHA256()
    /// Bytes hashed so far.
    public private(set) var count: Int64 = 0

    public init() {}

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        hasher.update(bufferPointer: buffer)
        count += Int64(buffer.count)
    }

    public mutating func update(_ bytes: some DataProtocol) {
        hasher.update(data: bytes)
        count += Int64(bytes.count)
    }

    /// The hash of everything given; the hasher is spent.
    public func finalize() -> ContentHash {
        ContentHash(uncheckedBytes: Array(hasher.finalize()))
    }
}
