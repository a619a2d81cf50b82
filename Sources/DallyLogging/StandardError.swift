import Foundation

/// Standard error as a server writes its logs and last words there: a line that cannot be
/// written (the log pipe's reader died, the disk under a log file is full) is lost, and the
/// process goes on serving.
///
/// Foundation's `FileHandle.write(_:)` traps when the write fails: a gateway logging in JSON
/// died at its next log line once its standard error broke, where the text logs (`fwrite`)
/// carried on.
///
/// ```swift
/// StandardError.write(Array("dally: configuration refused: …\n".utf8))
/// ```
public enum StandardError {
    /// Writes `bytes` in one write, or drops them when standard error cannot take them.
    public static func write(_ bytes: some DataProtocol) {
        try? FileHandle.standardError.write(contentsOf: bytes)
    }

    /// Writes `text` and a newline.
    public static func line(_ text: String) {
        write(Data((text + "\n").utf8))
    }
}
