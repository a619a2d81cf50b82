import CZstd

/// One libzstd decompression context that decodes a whole body into a ``BoundedOutput``.
///
/// It streams (`ZSTD_decompressStream`) rather than decoding in one shot, so a body that expands
/// past the limit is refused after at most one step beyond it instead of after allocating the
/// full expansion. Noncopyable so the context has a single owner and is freed exactly once.
struct ZstdDecoder: ~Copyable {
    /// The largest window a frame may ask for, as a power of two: 2^27 = 128 MiB, libzstd's own
    /// default limit, set explicitly because it bounds the memory a single body can make the
    /// decoder allocate whatever its declared sizes say.
    static let windowLogMax: Int32 = 27

    private let context: OpaquePointer

    init() {
        // libzstd fails here only when malloc does, which Swift treats as fatal everywhere else.
        guard let context = ZSTD_createDCtx() else {
            preconditionFailure("libzstd could not allocate a decompression context")
        }
        let result = ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Self.windowLogMax)
        precondition(ZSTD_isError(result) == 0, "ZSTD_d_windowLogMax rejected: \(LibZstd.errorName(result))")
        self.context = context
    }

    deinit {
        ZSTD_freeDCtx(context)
    }

    /// Decodes every frame in `input` (concatenated frames are valid zstd) into `output`.
    ///
    /// - Throws: `.tooLarge` as soon as the output would pass its limit, including up front
    ///   when the first frame's header declares a larger size; `.corrupt` for an empty body,
    ///   anything libzstd rejects, or input that ends inside a frame.
    func decode(_ input: UnsafeRawBufferPointer, into output: inout BoundedOutput) throws(DecompressionError) {
        guard let base = input.baseAddress, !input.isEmpty else { throw .corrupt("zstd: empty body") }
        let declared = ZSTD_getFrameContentSize(base, input.count)
        if declared < ZSTD_CONTENTSIZE_ERROR, declared > UInt64(output.limit) {
            throw .tooLarge(limit: output.limit)
        }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: ZSTD_DStreamOutSize(), alignment: 1)
        defer { scratch.deallocate() }
        var source = ZSTD_inBuffer(src: base, size: input.count, pos: 0)
        // libzstd's last return value: 0 exactly when a frame has been fully decoded and flushed.
        var hint = 0
        while true {
            let consumed = source.pos
            var sink = ZSTD_outBuffer(dst: scratch.baseAddress, size: output.stepSize(chunk: scratch.count), pos: 0)
            hint = ZSTD_decompressStream(context, &sink, &source)
            guard ZSTD_isError(hint) == 0 else { throw .corrupt("zstd: " + LibZstd.errorName(hint)) }
            try output.append(UnsafeRawBufferPointer(rebasing: scratch[..<sink.pos]))
            // All input read, and either the last frame is complete (calling again would start
            // a new, empty one) or there was room left over, so libzstd has nothing more to give.
            if source.pos == source.size, hint == 0 || sink.pos < sink.size { break }
            if sink.pos == 0, source.pos == consumed { throw .corrupt("zstd: decoder made no progress") }
        }
        guard hint == 0 else { throw .corrupt("zstd: truncated frame") }
    }
}
