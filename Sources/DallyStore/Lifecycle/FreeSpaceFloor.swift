#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DallyCore

/// Refuses local writes while the data directory's filesystem has less free space than the
/// floor (`[store] min_free_bytes`), so that the gateway says `507 insufficient_storage`
/// before SQLite runs into ENOSPC, and keeps room for sync to drain the outbox and for reads.
///
/// The free space is asked of the filesystem (`statvfs`) at most every `interval`, so a write
/// costs a clock read, not a system call.
///
/// ```swift
/// let floor = FreeSpaceFloor(directory: "/var/lib/dally", minFreeBytes: 64 << 20)
/// try floor.check()   // throws insufficient_storage below 64 MiB free
/// ```
public final class FreeSpaceFloor: Sendable {
    let minFreeBytes: Int64
    private let free: ThrottledReading<Int64?>

    public init(directory: String, minFreeBytes: Int64, interval: Duration = .seconds(1)) {
        self.minFreeBytes = minFreeBytes
        self.free = ThrottledReading(interval: interval) { Self.freeBytes(of: directory) }
    }

    /// Bytes an unprivileged process may still write on the directory's filesystem; nil when
    /// the filesystem cannot tell.
    public static func freeBytes(of directory: String) -> Int64? {
        var stats = statvfs()
        guard statvfs(directory, &stats) == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }

    public func check() throws(DallyError) {
        guard minFreeBytes > 0 else { return }
        let free = self.free.value
        guard let free, free < minFreeBytes else { return }
        throw DallyError(
            .insufficientStorage,
            "the data directory's filesystem has \(ByteCount.words(Int(free))) free, under store.min_free_bytes "
                + "(\(ByteCount.words(Int(minFreeBytes)))): the write was not saved (reads and sync go on). Free space, then write again")
    }
}
