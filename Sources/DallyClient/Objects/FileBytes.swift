import DallyObjects
import Foundation

/// Reading and writing object bytes to files, a piece at a time.
enum FileBytes {
    /// Pieces read from disk and sent: large enough for few system calls, small enough that a
    /// transfer holds little memory.
    static let pieceSize = 256 * 1024

    /// The file at `path`, read a piece at a time as the stream is iterated.
    static func stream(path: String, progress: ProgressHandler?, total: Int64) throws -> ByteStream {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw DallyClientError.fileError("cannot read \(path)")
        }
        return ByteStream {
            let reader = FileReader(path: path)
            return {
                guard let piece = try reader.read(count: pieceSize) else { return nil }
                progress?(TransferProgress(completed: reader.offset, total: total))
                return piece
            }
        }
    }

    /// The size and SHA-256 of the file at `path`, read once.
    static func measure(path: String) throws -> (size: Int64, hash: String) {
        let reader = FileReader(path: path)
        var hash = StreamingHash()
        while let piece = try reader.read(count: pieceSize) { hash.update(piece) }
        return (hash.count, hash.finalize().hex)
    }
}
