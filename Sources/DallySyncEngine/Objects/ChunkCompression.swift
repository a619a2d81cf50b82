import DallyCompression

/// Whether a chunk is worth compressing, decided cheaply: compress a sample at level 1 and
/// compress the whole only if the sample shrank by at least 3%. JPEG, video and archives do
/// not shrink, and zstd over a whole megabyte of them would only cost CPU.
enum ChunkCompression {
    static let sampleBytes = 64 * 1024
    static let level = 3

    static func payload(for bytes: [UInt8]) -> (bytes: [UInt8], compressed: Bool) {
        let sample = bytes.count <= sampleBytes ? bytes : Array(bytes[0..<sampleBytes])
        guard let probe = try? Compressor.compress(sample, coding: .zstd, level: 1),
            probe.count * 100 <= sample.count * 97
        else { return (bytes, false) }
        guard let whole = try? Compressor.compress(bytes, coding: .zstd, level: level), whole.count < bytes.count else {
            return (bytes, false)
        }
        return (whole, true)
    }
}
