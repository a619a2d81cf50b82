import CZstd

/// One libzstd compression context, streaming into a growing array.
///
/// Noncopyable so the context has a single owner and is freed exactly once, when the encoder
/// goes out of scope.
struct ZstdEncoder: ~Copyable {
    /// Levels Dally accepts: libzstd's negative "fast" levels and 1...19. 0 is refused because
    /// libzstd reads it as "default", which would surprise anyone used to deflate's 0 = store;
    /// 20...22 ("ultra") need hundreds of megabytes per context, too much for a server.
    static func accepts(level: Int) -> Bool {
        level != 0 && (Int(ZSTD_minCLevel())...19).contains(level)
    }

    private let context: OpaquePointer
    private let scratch: UnsafeMutableRawBufferPointer

    init(level: Int) throws(CompressionError) {
        guard Self.accepts(level: level) else { throw .invalidLevel(level, coding: .zstd) }
        guard let context = ZSTD_createCCtx() else {
            throw .library("zstd: cannot allocate a compression context")
        }
        // The frame header records the content size whenever it is known and the dictionary id
        // whenever there is one; no checksum (4 bytes a frame: TCP and the JSON parser already
        // catch corruption). These are libzstd's defaults, set so that no default can change them.
        let settings = [
            (ZSTD_c_compressionLevel, Int32(level)),
            (ZSTD_c_contentSizeFlag, 1), (ZSTD_c_dictIDFlag, 1), (ZSTD_c_checksumFlag, 0),
        ]
        for (parameter, value) in settings {
            let result = ZSTD_CCtx_setParameter(context, parameter, value)
            guard ZSTD_isError(result) == 0 else {
                ZSTD_freeCCtx(context)
                throw .library("zstd: " + LibZstd.errorName(result))
            }
        }
        self.context = context
        self.scratch = .allocate(byteCount: ZSTD_CStreamOutSize(), alignment: 1)
    }

    deinit {
        ZSTD_freeCCtx(context)
        scratch.deallocate()
    }

    /// Prepares the next frame: compressed with `dictionary` (a CDict made for this encoder's
    /// level, which must stay alive until the frame ends; nil for none), and declaring `size`
    /// bytes of content in its header (nil: no declared size, unless the first ``encode`` of
    /// the frame ends it). Call only between frames, before the frame's first ``encode``; the
    /// frame must then receive exactly `size` bytes.
    func startFrame(size: Int?, dictionary: OpaquePointer?) throws(CompressionError) {
        let pledged = size.map { UInt64($0) } ?? ZSTD_CONTENTSIZE_UNKNOWN
        var result = ZSTD_CCtx_refCDict(context, dictionary)
        if ZSTD_isError(result) == 0 { result = ZSTD_CCtx_setPledgedSrcSize(context, pledged) }
        guard ZSTD_isError(result) == 0 else { throw .library("zstd: " + LibZstd.errorName(result)) }
    }

    /// Compresses `input` and appends whatever `flush` requires to `output`.
    ///
    /// When the first call ends the frame, libzstd knows the whole input and records its size
    /// in the frame header, which lets a decoder refuse an oversized body before decoding.
    func encode(
        _ input: UnsafeRawBufferPointer,
        flush: FlushMode,
        into output: inout [UInt8]
    ) throws(CompressionError) {
        let directive = switch flush {
        case .none: ZSTD_e_continue
        case .flush: ZSTD_e_flush
        case .end: ZSTD_e_end
        }
        var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        while true {
            var sink = ZSTD_outBuffer(dst: scratch.baseAddress, size: scratch.count, pos: 0)
            let unflushed = ZSTD_compressStream2(context, &sink, &source, directive)
            guard ZSTD_isError(unflushed) == 0 else { throw .library("zstd: " + LibZstd.errorName(unflushed)) }
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<sink.pos]))
            let done = flush == .none ? source.pos == source.size : unflushed == 0
            if done { return }
        }
    }
}
