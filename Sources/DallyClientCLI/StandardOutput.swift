import DallyLogging
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Standard output as the producer of a pipeline writes it: when the reader has gone
/// (`dally client rows orders | head -1`), the command ends the way `cat` would, by
/// `SIGPIPE`, quietly.
///
/// Foundation's `FileHandle.write(_:)` traps on a closed pipe (the process ignores `SIGPIPE`,
/// as its HTTP client needs, so a write gets `EPIPE` instead of the signal): a crash and a
/// backtrace for what every shell user does with `head`.
///
/// ```swift
/// StandardOutput.write(Array("{\"id\":\"o1\"}\n".utf8))
/// ```
public enum StandardOutput {
    /// Writes `bytes` whole; ends the process by `SIGPIPE` when the reader has gone, and with
    /// exit status 1 (saying why) when standard output cannot be written otherwise.
    public static func write(_ bytes: some DataProtocol) {
        do {
            try FileHandle.standardOutput.write(contentsOf: bytes)
        } catch {
            if ClientSession.posixCode(of: error) == EPIPE {
                signal(SIGPIPE, SIG_DFL)
                raise(SIGPIPE)
            }
            StandardError.line("dally client: cannot write standard output: \(ClientSession.systemReason(error))")
            exit(1)
        }
    }
}
