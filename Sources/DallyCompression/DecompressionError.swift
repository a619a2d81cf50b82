/// Why a request body could not be decoded.
///
/// Three cases because a server answers them differently: an oversized body is 413 Content Too
/// Large, a body compressed with a dictionary the server does not have is the sender's to fix by
/// sending the dictionary (or compressing without it), anything else is a malformed request (400).
public enum DecompressionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The decoded body would be larger than `limit` bytes. Decoding stopped there, so a
    /// compression bomb costs at most `limit` bytes of memory.
    case tooLarge(limit: Int)
    /// The body is not a complete, well-formed stream of its coding: garbage, a truncated
    /// stream, data after the end of a zlib stream, or an empty body. The message says which,
    /// for logs; it is not meant for clients.
    case corrupt(String)
    /// A zstd frame names, in its header, a dictionary that the caller could not provide.
    /// Nothing of the body is returned; the id is the one the frame names.
    case unknownDictionary(UInt32)

    public var description: String {
        switch self {
        case let .tooLarge(limit): "decoded body larger than \(limit) bytes"
        case let .corrupt(reason): "corrupt body: \(reason)"
        case let .unknownDictionary(id): "body compressed with zstd dictionary \(id), which is not known here"
        }
    }
}
