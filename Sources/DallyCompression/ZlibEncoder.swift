import CZlib

/// One zlib deflate stream producing the zlib format (RFC 1950), streaming into a growing array.
///
/// The `z_stream` lives on the heap because zlib keeps a pointer back to it and checks it on
/// every call: a Swift value passed with `&` may move between calls. Noncopyable so it has a
/// single owner and is ended exactly once.
struct ZlibEncoder: ~Copyable {
    /// zlib's levels: 0 stores, 9 compresses hardest.
    static let levels = 0...9

    private let stream: UnsafeMutablePointer<z_stream>
    private let scratch: UnsafeMutableRawBufferPointer

    init(level: Int) throws(CompressionError) {
        guard Self.levels.contains(level) else { throw .invalidLevel(level, coding: .deflate) }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // windowBits 15: the zlib wrapper with a 32 KiB window; memLevel 8 is zlib's default.
        let result = CZlib_deflateInit2(stream, Int32(level), Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY)
        guard result == Z_OK else {
            let message = LibZlib.message(stream, result)
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .library("deflate: " + message)
        }
        self.stream = stream
        self.scratch = .allocate(byteCount: 64 * 1024, alignment: 1)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
    }

    /// Compresses `input` and appends whatever `flush` requires to `output`.
    ///
    /// `.flush` is a full flush (byte-aligned, dictionary reset), so what follows it decodes
    /// without the data before it.
    func encode(
        _ input: UnsafeRawBufferPointer,
        flush: FlushMode,
        into output: inout [UInt8]
    ) throws(CompressionError) {
        var offset = 0
        repeat {
            // avail_in is 32 bits: hand zlib at most 1 GiB at a time.
            let take = min(input.count - offset, 1 << 30)
            stream.pointee.next_in = LibZlib.nextIn(input, at: offset)
            stream.pointee.avail_in = UInt32(take)
            offset += take
            let mode = offset < input.count ? Z_NO_FLUSH : flush.zlibValue
            // zlib is done with this piece once it leaves room in the output buffer.
            repeat {
                stream.pointee.next_out = scratch.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = UInt32(scratch.count)
                let result = deflate(stream, mode)
                guard result == Z_OK || result == Z_STREAM_END || result == Z_BUF_ERROR else {
                    throw .library("deflate: " + LibZlib.message(stream, result))
                }
                let produced = scratch.count - Int(stream.pointee.avail_out)
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<produced]))
            } while stream.pointee.avail_out == 0
        } while offset < input.count
    }
}

extension FlushMode {
    /// The zlib flush value for this mode.
    fileprivate var zlibValue: Int32 {
        switch self {
        case .none: Z_NO_FLUSH
        case .flush: Z_FULL_FLUSH
        case .end: Z_FINISH
        }
    }
}
