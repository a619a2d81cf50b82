import CZstd

/// One libzstd decompression context that decodes a whole body, frame by frame, into a
/// ``BoundedOutput``.
///
/// Before each frame it reads the frame's header: a declared content size larger than the room
/// left under the limit is refused at once, and a dictionary id is resolved (or refused) before
/// any of the frame is decoded. Each frame is then streamed (`ZSTD_decompressStream`) rather
/// than decoded in one shot, so a frame that expands past the limit without declaring its size
/// is refused after at most one step beyond it instead of after allocating the full expansion.
/// Noncopyable so the context has a single owner and is freed exactly once.
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
    /// Skippable frames (magic numbers 0x184D2A50 to 0x184D2A5F) are skipped, as RFC 8878 says
    /// a decoder shall: they cost nothing to skip and declare no content.
    ///
    /// - Parameter dictionaries: The dictionary for an id a frame names, or nil when there is
    ///   none by that id. Called once per frame that names one.
    /// - Throws: `.tooLarge` as soon as the output would pass its limit, including up front
    ///   when a frame's header declares more than the room left; `.unknownDictionary` for a
    ///   frame that names a dictionary `dictionaries` does not give; `.corrupt` for an empty
    ///   body, anything libzstd rejects (including a frame that is not a frame, or a dictionary
    ///   that does not match the frame), or input that ends inside a frame.
    func decode(
        _ input: UnsafeRawBufferPointer,
        into output: inout BoundedOutput,
        dictionaries: (UInt32) -> ZstdDictionary?
    ) throws(DecompressionError) {
        guard let base = input.baseAddress, !input.isEmpty else { throw .corrupt("zstd: empty body") }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: ZSTD_DStreamOutSize(), alignment: 1)
        defer { scratch.deallocate() }
        defer { ZSTD_DCtx_refDDict(context, nil) }
        var source = ZSTD_inBuffer(src: base, size: input.count, pos: 0)
        while source.pos < source.size {
            let dictionary = try dictionary(
                forFrameAt: base + source.pos, count: source.size - source.pos, output: output, dictionaries: dictionaries)
            try withExtendedLifetime(dictionary) { () throws(DecompressionError) in
                let reset = ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
                let prepared = try dictionary?.decompressionDictionary()
                let referenced = ZSTD_DCtx_refDDict(context, prepared)
                for result in [reset, referenced] where ZSTD_isError(result) != 0 {
                    throw .corrupt("zstd: " + LibZstd.errorName(result))
                }
                try decodeFrame(&source, into: &output, scratch: scratch)
            }
        }
    }

    /// Reads the header of the frame at `start` (with `count` bytes of input left): refuses a
    /// declared size over the room left in `output`, and returns the dictionary the frame
    /// names, if any.
    private func dictionary(
        forFrameAt start: UnsafeRawPointer,
        count: Int,
        output: borrowing BoundedOutput,
        dictionaries: (UInt32) -> ZstdDictionary?
    ) throws(DecompressionError) -> ZstdDictionary? {
        // 0 for a skippable frame; ZSTD_CONTENTSIZE_ERROR when this is not the start of a frame
        // or the input ends inside the header.
        let declared = ZSTD_getFrameContentSize(start, count)
        if declared == ZSTD_CONTENTSIZE_ERROR {
            throw .corrupt("zstd: no frame header where a frame should start (garbage, or a truncated header)")
        }
        if declared != ZSTD_CONTENTSIZE_UNKNOWN, declared > UInt64(output.limit - output.bytes.count) {
            throw .tooLarge(limit: output.limit)
        }
        let id = ZSTD_getDictID_fromFrame(start, count)
        guard id != 0 else { return nil }
        guard let dictionary = dictionaries(id) else { throw .unknownDictionary(id) }
        return dictionary
    }

    /// Streams one frame from `source` into `output`, stopping at its end.
    private func decodeFrame(
        _ source: inout ZSTD_inBuffer,
        into output: inout BoundedOutput,
        scratch: UnsafeMutableRawBufferPointer
    ) throws(DecompressionError) {
        while true {
            let consumed = source.pos
            var sink = ZSTD_outBuffer(dst: scratch.baseAddress, size: output.stepSize(chunk: scratch.count), pos: 0)
            // 0 exactly when the frame has been fully decoded and flushed.
            let hint = ZSTD_decompressStream(context, &sink, &source)
            guard ZSTD_isError(hint) == 0 else { throw .corrupt("zstd: " + LibZstd.errorName(hint)) }
            try output.append(UnsafeRawBufferPointer(rebasing: scratch[..<sink.pos]))
            if hint == 0 { return }
            // All input read and room left over: libzstd is waiting for bytes that will not come.
            if source.pos == source.size, sink.pos < sink.size { throw .corrupt("zstd: truncated frame") }
            if sink.pos == 0, source.pos == consumed { throw .corrupt("zstd: decoder made no progress") }
        }
    }
}
