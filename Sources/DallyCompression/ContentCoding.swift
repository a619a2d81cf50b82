/// An HTTP content coding that Dally can produce and accept.
///
/// Only two real codings are supported: zstd, because it is the best ratio per CPU second for
/// the small JSON bodies Dally moves, and deflate, because every HTTP client has it. Anything
/// else (gzip, br, …) is treated as unknown so the caller can answer 415 rather than guess.
public enum ContentCoding: String, Sendable, CaseIterable {
    /// Zstandard (RFC 8878).
    case zstd
    /// The zlib format (RFC 1950) wrapping deflate data, which is what HTTP's "deflate" means
    /// (RFC 9110 §8.4.1.2); raw deflate without the zlib wrapper is not accepted.
    case deflate
    /// No transformation.
    case identity

    /// Parses one token of a Content-Encoding or Accept-Encoding header.
    ///
    /// Matching is case-insensitive and ignores surrounding spaces and tabs, as HTTP tokens are
    /// case-insensitive and lists allow optional whitespace. An empty token means identity,
    /// because a body with no coding applied is what an empty Content-Encoding describes.
    /// Returns nil for a coding Dally does not implement.
    public init?(header: some StringProtocol) {
        switch HTTPToken.trimmed(header).lowercased() {
        case "zstd": self = .zstd
        case "deflate": self = .deflate
        case "identity", "": self = .identity
        default: return nil
        }
    }

    /// The value to send in a Content-Encoding header, or nil for identity, because identity is
    /// expressed by leaving the header out.
    public var header: String? {
        self == .identity ? nil : rawValue
    }
}
