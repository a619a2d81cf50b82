import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` and waited for with `waitpid`, its standard
/// input from `/dev/null` and its output in files.
///
/// Not Foundation's `Process`: its `run()` lists `/proc/self/fd` to close inherited
/// descriptors, and crashed the test process (a bad pointer in a `memmove` there) while
/// hundreds of parallel tests opened and closed sockets; its exit watch, a dispatch source,
/// also never fired while tests held every thread of the pool. Here the child closes every
/// descriptor past the standard three as it starts (`closefrom`), without listing them.
///
/// ```swift
/// let child = try SpawnedProcess("/bin/sh", ["-c", "echo hi"], standardOutput: "/tmp/out")
/// child.waitUntilExit()   // child.terminationStatus == 0
/// ```
public final class SpawnedProcess: Sendable {
    public let processIdentifier: pid_t
    /// The raw `waitpid` status once the child was reaped.
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` (without the program name), `environment` (the
    /// process's when nil), its standard input read from the file `standardInput`, and its
    /// standard output and error appended to the files given (created; `/dev/null` when nil).
    ///
    /// - Parameter outputDescriptor: a descriptor of this process (a pipe's write end) that
    ///   becomes the child's standard output instead of the file `standardOutput`.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        standardInput: String? = nil, standardOutput: String? = nil, outputDescriptor: Int32? = nil,
        standardError: String? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput ?? "/dev/null", O_RDONLY, 0)
        if let outputDescriptor {
            posix_spawn_file_actions_adddup2(&actions, outputDescriptor, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, standardOutput ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        }
        posix_spawn_file_actions_addopen(&actions, 2, standardError ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        // Nothing else of the test process reaches the child (a listening socket inherited by
        // a child would keep its port taken after the test closed it).
        if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let spawned = envp.map { envp in posix_spawn(&pid, executable, &actions, nil, argv, envp) }
            ?? posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestSupportError("cannot start \(executable): error \(spawned)") }
        processIdentifier = pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's
    /// Glibc module does not declare.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFrom: CloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    /// Whether the child has not exited yet (reaping it if it has).
    public var isRunning: Bool {
        reaped.withLock { reaped in
            guard reaped == nil else { return false }
            var status: Int32 = 0
            guard waitpid(processIdentifier, &status, WNOHANG) == processIdentifier else { return true }
            reaped = status
            return false
        }
    }

    /// Blocks until the child exits.
    public func waitUntilExit() {
        reaped.withLock { reaped in
            guard reaped == nil else { return }
            var status: Int32 = 0
            while waitpid(processIdentifier, &status, 0) == -1 {
                guard errno == EINTR else { return }
            }
            reaped = status
        }
    }

    /// As Foundation's `Process` gives it: the exit code, or the signal that ended the child;
    /// -1 before it exited.
    public var terminationStatus: Int32 {
        guard let status = reaped.withLock({ $0 }) else { return -1 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// Runs `executable` to its end with `input` on its standard input; its exit status
    /// (``terminationStatus``) and its standard output, with its standard error after it when
    /// `mergingErrors`.
    public static func output(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil,
        mergingErrors: Bool = false
    ) throws -> (status: Int32, output: String) {
        let base = ScratchSpace.path("dally-child-")
        defer { for ext in [".in", ".out"] { try? FileManager.default.removeItem(atPath: base + ext) } }
        if let input { try input.write(toFile: base + ".in", atomically: false, encoding: .utf8) }
        let child = try SpawnedProcess(
            executable, arguments, environment: environment, standardInput: input == nil ? nil : base + ".in",
            standardOutput: base + ".out",
            standardError: mergingErrors ? base + ".out" : nil)
        child.waitUntilExit()
        let output = FileManager.default.contents(atPath: base + ".out") ?? Data()
        return (child.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// Whether it exited normally with status 0.
    public var succeeded: Bool {
        guard let status = reaped.withLock({ $0 }) else { return false }
        return status & 0x7f == 0 && (status >> 8) & 0xff == 0
    }
}
