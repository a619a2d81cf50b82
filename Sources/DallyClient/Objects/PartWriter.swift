import Foundation

/// Appends pieces to an open part file.
struct PartWriter {
    let handle: FileHandle
    let path: String

    func write(_ piece: [UInt8]) throws {
        do { try handle.write(contentsOf: piece) } catch { throw DallyClientError.fileError("writing \(path): \(error)") }
    }

    func close() throws { try handle.close() }
}
