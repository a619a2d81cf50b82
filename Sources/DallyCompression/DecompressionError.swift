/// Why a request body could not be decoded.
///
/// Two cases because a server answers them differently: an oversized body is 413 Content Too
/// Large, anything else is a malformed request (400).
public enum DecompressionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The decoded body would be larger than `limit` bytes. Decoding stopped there, so a
    /// compression bomb costs at most `limit` bytes of memory.
    case tooLarge(limit: Int)
    /// The body is not a complete, well-formed stream of its coding: garbage, a truncated
    /// stream, data after the end of a zlib stream, or an empty body. The message says which,
    /// for logs; it is not meant for clients.
    case corrupt(String)

    public var description: String {
        switch self {
        case let .tooLarge(limit): "decoded body larger than \(limit) bytes"
        case let .corrupt(reason): "corrupt body: \(reason)"
        }
    }
}
