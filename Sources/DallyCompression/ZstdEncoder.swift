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
        let result = ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level))
        guard ZSTD_isError(result) == 0 else {
            ZSTD_freeCCtx(context)
            throw .library("zstd: " + LibZstd.errorName(result))
        }
        self.context = context
        self.scratch = .allocate(byteCount: ZSTD_CStreamOutSize(), alignment: 1)
    }

    deinit {
        ZSTD_freeCCtx(context)
        scratch.deallocate()
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
