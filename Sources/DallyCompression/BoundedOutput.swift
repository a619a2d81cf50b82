/// Decoded bytes that refuse to grow past a limit.
///
/// The decoders write each step into a fixed scratch buffer and hand it here, so the only memory
/// that grows with the body is this array, and it never grows beyond `limit`: its capacity is
/// managed here rather than left to `Array`'s doubling, which could reserve up to twice the limit.
struct BoundedOutput {
    /// The most bytes the output may hold.
    let limit: Int
    /// The bytes accepted so far.
    private(set) var bytes: [UInt8] = []

    /// - Parameter limit: The most bytes to accept; a negative limit accepts nothing.
    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// How many bytes the next decode step should be allowed to write: up to `chunk`, but no
    /// more than one byte past the limit, which is enough to see an overrun without decoding
    /// further.
    func stepSize(chunk: Int) -> Int {
        let remaining = limit - bytes.count
        return remaining < chunk ? remaining + 1 : chunk
    }

    /// Appends `chunk`, or throws `.tooLarge` if that would pass the limit.
    mutating func append(_ chunk: UnsafeRawBufferPointer) throws(DecompressionError) {
        guard chunk.count <= limit - bytes.count else { throw .tooLarge(limit: limit) }
        let needed = bytes.count + chunk.count
        if needed > bytes.capacity {
            bytes.reserveCapacity(min(limit, max(needed, bytes.capacity * 2)))
        }
        bytes.append(contentsOf: chunk)
    }
}
