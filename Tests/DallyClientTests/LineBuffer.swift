import Foundation

/// Bytes split into lines as they arrive. Fed by one reader.
final class LineBuffer: @unchecked Sendable {
    private var bytes: [UInt8] = []

    func add(_ data: Data) -> [String] {
        bytes += data
        var lines: [String] = []
        while let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: bytes[..<newline], as: UTF8.self))
            bytes.removeSubrange(...newline)
        }
        return lines
    }
}
