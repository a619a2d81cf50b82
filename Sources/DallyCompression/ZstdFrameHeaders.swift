import CZstd

/// What the headers of a zstd body say before anything is decoded.
public enum ZstdFrameHeaders {
    /// The dictionary ids the frames of `input` name (0, "none", left out), so that a server can
    /// fetch them before decoding, and refuse a body naming one it lacks.
    ///
    /// - Throws: `.corrupt` when a frame's size cannot be read (garbage, or a truncated frame).
    public static func dictionaryIDs(in input: UnsafeRawBufferPointer) throws(DecompressionError) -> Set<UInt32> {
        guard let base = input.baseAddress else { return [] }
        var ids: Set<UInt32> = []
        var offset = 0
        while offset < input.count {
            let frame = base + offset
            let remaining = input.count - offset
            let size = ZSTD_findFrameCompressedSize(frame, remaining)
            guard ZSTD_isError(size) == 0, size > 0 else {
                throw .corrupt("zstd: " + LibZstd.errorName(size))
            }
            let id = ZSTD_getDictID_fromFrame(frame, remaining)
            if id != 0 { ids.insert(id) }
            offset += size
        }
        return ids
    }
}
