/// How far an encoder must push its output at the end of one `encode` call.
///
/// Separate from the one-shot ``Compressor`` so a streamed response can flush after each message
/// without ending the stream.
enum FlushMode: Sendable {
    /// Keep buffering; emit only what the encoder has ready.
    case none
    /// Emit everything so far so a reader can decode it, and keep the stream open.
    case flush
    /// Emit everything and end the stream (zstd frame epilogue, zlib trailer).
    case end
}
