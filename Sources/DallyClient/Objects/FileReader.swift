import Foundation

/// One open file read from start to end; closed when dropped. Read by one stream's iterator.
final class FileReader: @unchecked Sendable {
    private let path: String
    private var handle: FileHandle?
    private(set) var offset: Int64 = 0

    init(path: String) { self.path = path }

    deinit { try? handle?.close() }

    func read(count: Int) throws -> [UInt8]? {
        if handle == nil {
            guard let opened = FileHandle(forReadingAtPath: path) else {
                throw DallyClientError.fileError("cannot open \(path)")
            }
            handle = opened
        }
        guard let data = try handle?.read(upToCount: count), !data.isEmpty else { return nil }
        offset += Int64(data.count)
        return Array(data)
    }
}
