import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive lock on a data directory, so that two processes never share one replica: the
/// local sequence is handed out from memory, and a second writer would reuse numbers.
package final class DataDirectoryLock: Sendable {
    private let descriptor: Int32
    private let held = Mutex(true)

    /// Takes the lock on `directory/dally.lock`, creating the file if needed.
    ///
    /// - Throws: ``StoreError`` when another process holds it or the file cannot be opened.
    package init(directory: String) throws {
        let path = directory + "/dally.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw StoreError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw StoreError("data directory \(directory) is in use by another dally process (\(path) is locked)")
        }
        descriptor = fd
    }

    /// Gives the lock up; later calls do nothing.
    package func release() {
        let wasHeld = held.withLock { held in
            defer { held = false }
            return held
        }
        guard wasHeld else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    deinit {
        release()
    }
}
