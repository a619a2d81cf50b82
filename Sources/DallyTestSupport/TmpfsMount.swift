import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted on a new directory, for tests of a disk that really fills: the
/// filesystem refuses writes (ENOSPC) the way a full disk in the field does, where SQLite's
/// `max_page_count` only stands in for it.
///
/// Mounting needs root, allowed to mount (in a container too: found once by mounting a small
/// one, ``isPermitted``); tests that need one are off elsewhere. Unmount it before the scratch
/// space goes (a process with files open there keeps it busy: stop it first).
///
/// ```swift
/// @Test(.enabled(if: TmpfsMount.isPermitted)) func fills() throws {
///     let disk = try TmpfsMount(size: "3m")
///     defer { disk.unmount() }
///     // … a data directory under disk.path …
/// }
/// ```
public final class TmpfsMount: Sendable {
    /// The mounted directory.
    public let path: String

    static let mount = ["/usr/bin/mount", "/bin/mount"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let umount = ["/usr/bin/umount", "/bin/umount"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether this process may mount a tmpfs.
    public static let isPermitted: Bool = {
        guard getuid() == 0, mount != nil, umount != nil, let probe = try? TmpfsMount(size: "64k") else { return false }
        probe.unmount()
        return true
    }()

    /// Mounts a tmpfs of `size` (`mount`'s notation: `"3m"`) on a new directory in the scratch
    /// space, owned by the system user `owner` when given (PostgreSQL's server writes as
    /// `postgres`).
    public init(size: String, owner: String? = nil) throws {
        path = ScratchSpace.path("dally-tmpfs-")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Self.run(Self.mount, ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        if let owner { try Self.run("/bin/chown", [owner, path]) }
    }

    /// Unmounts it; the directory stays, empty.
    public func unmount() {
        try? Self.run(Self.umount, [path])
    }

    private static func run(_ executable: String?, _ arguments: [String]) throws {
        guard let executable else { throw TestSupportError("no mount or umount on this machine") }
        let child = try SpawnedProcess(executable, arguments)
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            throw TestSupportError("\(executable) \(arguments.joined(separator: " ")) exited \(child.terminationStatus)")
        }
    }
}
