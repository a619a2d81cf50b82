import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where tests keep their files: one directory per test process under the system's temporary
/// directory, removed when the process exits, so that a run leaves nothing behind however a
/// test ends (store fixtures, gateways and clouds that a test never shuts down).
///
/// For example:
/// ```swift
/// let directory = ScratchSpace.path("dally-store-tests-")  // …/dally-tests-4242/dally-store-tests-<UUID>
/// ```
public enum ScratchSpace {
    /// A new path under this process's scratch directory: `prefix` and a UUID. Nothing is
    /// created there; the caller makes the file or directory it needs.
    public static func path(_ prefix: String) -> String {
        root + "/" + prefix + UUID().uuidString
    }

    /// Made on first use; removed, with everything in it, at the process's exit. A process
    /// killed before its exit leaves it (named by its pid, so it can be told apart).
    public static let root: String = {
        let root = NSTemporaryDirectory() + "dally-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: ScratchSpace.root) }
        return root
    }()
}
