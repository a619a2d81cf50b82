import CZlib

/// One zlib inflate stream that decodes a zlib-format body (RFC 1950) into a ``BoundedOutput``.
///
/// It inflates in steps no larger than the room left under the limit (plus one byte, to notice
/// an overrun), so a compression bomb is refused as soon as it passes the limit. The `z_stream`
/// lives on the heap because zlib keeps a pointer back to it; noncopyable so it has a single
/// owner and is ended exactly once.
struct ZlibDecoder: ~Copyable {
    private let stream: UnsafeMutablePointer<z_stream>

    init() {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // windowBits 15: the zlib wrapper only (no raw deflate, no gzip), any window size.
        let result = CZlib_inflateInit2(stream, 15)
        // Fails only when out of memory or when zlib.h and libz disagree, neither about the input.
        precondition(result == Z_OK, "inflateInit2 failed: \(LibZlib.message(stream, result))")
        self.stream = stream
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes the single zlib stream that must make up all of `input` into `output`.
    ///
    /// - Throws: `.tooLarge` as soon as the output would pass its limit; `.corrupt` for an empty
    ///   body, anything zlib rejects, a stream that ends early, or bytes after its end.
    func decode(_ input: UnsafeRawBufferPointer, into output: inout BoundedOutput) throws(DecompressionError) {
        guard !input.isEmpty else { throw .corrupt("deflate: empty body") }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { scratch.deallocate() }
        var offset = 0  // bytes of input handed to zlib so far
        while true {
            if stream.pointee.avail_in == 0, offset < input.count {
                // avail_in is 32 bits: hand zlib at most 1 GiB at a time.
                let take = min(input.count - offset, 1 << 30)
                stream.pointee.next_in = LibZlib.nextIn(input, at: offset)
                stream.pointee.avail_in = UInt32(take)
                offset += take
            }
            let step = output.stepSize(chunk: scratch.count)
            let unreadBefore = stream.pointee.avail_in
            stream.pointee.next_out = scratch.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = UInt32(step)
            let result = inflate(stream, Z_NO_FLUSH)
            switch result {
            case Z_OK, Z_STREAM_END, Z_BUF_ERROR: break
            case Z_NEED_DICT: throw .corrupt("deflate: stream needs a preset dictionary")
            default: throw .corrupt("deflate: " + LibZlib.message(stream, result))
            }
            let produced = step - Int(stream.pointee.avail_out)
            try output.append(UnsafeRawBufferPointer(rebasing: scratch[..<produced]))
            let unread = Int(stream.pointee.avail_in) + (input.count - offset)
            if result == Z_STREAM_END {
                guard unread == 0 else { throw .corrupt("deflate: \(unread) bytes after the end of the zlib stream") }
                return
            }
            // All input read, and room left over: zlib is waiting for bytes that will not come.
            if unread == 0, produced < step { throw .corrupt("deflate: truncated stream") }
            if produced == 0, stream.pointee.avail_in == unreadBefore {
                throw .corrupt("deflate: decoder made no progress")
            }
        }
    }
}
