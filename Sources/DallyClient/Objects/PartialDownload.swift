import DallyObjects
import Foundation

/// A download to `path` in the making: the bytes so far in `path.part`, the hash of the object
/// they belong to in `path.part-sha256`. What lets a cut download resume where it stopped.
struct PartialDownload {
    let path: String
    var part: String { path + ".part" }
    var tag: String { path + ".part-sha256" }

    /// The bytes kept from an earlier attempt and the hash of the object they are the start
    /// of; nil when there is nothing to resume.
    func resumable() -> (size: Int64, hash: String)? {
        guard let data = FileManager.default.contents(atPath: tag), let size = Self.size(of: part), size > 0 else {
            return nil
        }
        let hash = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return hash.count == 64 ? (size, hash) : nil
    }

    /// Opens the part for writing: after the bytes kept (`appending`), whose hash is taken
    /// first, or empty. Records `hash` as what the part is of.
    func open(hash: String, appending: Bool) throws -> (PartWriter, StreamingHash) {
        var digest = StreamingHash()
        if appending {
            let reader = FileReader(path: part)
            while let piece = try reader.read(count: FileBytes.pieceSize) { digest.update(piece) }
        } else {
            guard FileManager.default.createFile(atPath: part, contents: nil) else {
                throw DallyClientError.fileError("cannot create \(part)")
            }
        }
        guard FileManager.default.createFile(atPath: tag, contents: Data(hash.utf8)),
            let handle = FileHandle(forWritingAtPath: part)
        else { throw DallyClientError.fileError("cannot write \(part)") }
        try handle.seekToEnd()
        return (PartWriter(handle: handle, path: part), digest)
    }

    /// The size of the file at `path`, nil when it cannot be opened.
    static func size(of path: String) -> Int64? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return (try? handle.seekToEnd()).map { Int64($0) }
    }

    /// Moves the whole, checked part to `path`.
    func finish() throws {
        do {
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
            try FileManager.default.moveItem(atPath: part, toPath: path)
            try? FileManager.default.removeItem(atPath: tag)
        } catch {
            throw DallyClientError.fileError("cannot move \(part) to \(path): \(error)")
        }
    }

    /// Forgets the part: its bytes are wrong or whole already.
    func discard() {
        try? FileManager.default.removeItem(atPath: part)
        try? FileManager.default.removeItem(atPath: tag)
    }
}
