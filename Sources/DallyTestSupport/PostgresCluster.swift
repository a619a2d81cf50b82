import DallyConfig
import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` in a temporary directory,
/// a free port on 127.0.0.1, trust authentication for the user `dally`, stopped when the
/// process exits (or by ``stop()``).
///
/// `initdb` refuses to run as root, so as root the cluster runs as the `postgres` system user
/// (which the Debian package creates), in a directory it owns. Start one per test process with
/// ``shared()`` and give each test its own database (``createDatabase(_:)``): a cluster takes
/// about 2 s to start, a database about 0.1 s.
///
/// ```swift
/// let cluster = try await PostgresCluster.shared()
/// let settings = try cluster.createDatabase()
/// ```
public final class PostgresCluster: Sendable {
    /// The cluster's directory (data, socket, log).
    public let directory: String
    public let port: Int
    let bin: String

    /// The user tests connect as (trusted: no password).
    public static let user = "dally"

    private static let started = Mutex<PostgresCluster?>(nil)
    private static let starting = Mutex(false)

    /// The process's cluster, started on first use and stopped when the process exits.
    public static func shared() throws -> PostgresCluster {
        // Tests run in parallel: start the cluster once, the others wait for it.
        while true {
            if let cluster = started.withLock({ $0 }) { return cluster }
            let mine = starting.withLock { busy in
                if busy { return false }
                busy = true
                return true
            }
            if mine {
                defer { starting.withLock { $0 = false } }
                let cluster = try PostgresCluster.start()
                started.withLock { $0 = cluster }
                atexit { PostgresCluster.stopShared() }
                return cluster
            }
            usleep(20_000)
        }
    }

    private static func stopShared() {
        started.withLock { $0 }?.stop()
    }

    private init(directory: String, port: Int, bin: String) {
        self.directory = directory
        self.port = port
        self.bin = bin
    }

    /// Creates and starts a new cluster.
    ///
    /// - Throws: ``TestSupportError`` when PostgreSQL is not installed (`apt-get install -y
    ///   postgresql`; `tools/deps.sh` does it) or does not start.
    public static func start() throws -> PostgresCluster {
        guard let bin = binDirectory() else {
            throw TestSupportError(
                "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install -y postgresql")
        }
        let directory = NSTemporaryDirectory() + "dally-pg-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            try run("/bin/chown", ["postgres", directory])
        }
        try asOwner("\(bin)/initdb -D \(directory)/data -A trust -U \(user) --no-sync >/dev/null")
        let cluster = PostgresCluster(directory: directory, port: try FreePort.find(), bin: bin)
        try cluster.startServer()
        return cluster
    }

    /// Starts the server on the cluster's port (again, after ``stopServer()``), waiting until it
    /// accepts connections.
    public func startServer() throws {
        // fsync off: a throwaway cluster needs no durability, and tests run faster without it.
        // DALLY_PG_SETTINGS adds server settings ("-c name=value …", no quotes or shell
        // characters), e.g. the statement log tools/bench/pg_statements.py reads.
        let extra = ProcessInfo.processInfo.environment["DALLY_PG_SETTINGS"].map { " " + $0 } ?? ""
        try Self.asOwner(
            "\(bin)/pg_ctl -D \(directory)/data -l \(directory)/log -w -t 60 "
                + "-o '-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300\(extra)' start"
                // The server inherits pg_ctl's descriptors: a pipe left open there would keep
                // this process reading it forever.
                + " </dev/null >>\(directory)/pg_ctl.log 2>&1")
    }

    /// Stops the server (fast mode: open connections are cut), keeping its data.
    public func stopServer() throws {
        try Self.asOwner("\(bin)/pg_ctl -D \(directory)/data -m fast -w stop </dev/null >>\(directory)/pg_ctl.log 2>&1")
    }

    /// Stops the server and deletes the cluster's directory.
    public func stop() {
        try? stopServer()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Creates a database with a fresh name and returns how to reach it.
    public func createDatabase(_ name: String = "t_" + UUID().uuidString.prefix(8).lowercased()) throws
        -> PostgresSettings
    {
        try Self.run(
            "\(bin)/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", Self.user, "-d", "postgres", "-qc", "CREATE DATABASE \"\(name)\""])
        return PostgresSettings(host: "127.0.0.1", port: port, username: Self.user, database: name)
    }

    /// Runs `sql` in `database` with psql; its output, unaligned and without headers.
    public func psql(_ sql: String, database: String) throws -> String {
        try Self.run(
            "\(bin)/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", Self.user, "-d", database, "-AtXqc", sql])
    }

    /// The newest installed version's bin directory.
    static func binDirectory() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return versions.compactMap(Int.init).sorted().reversed().map { "\(root)/\($0)/bin" }
            .first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }

    /// Runs a shell command as the cluster's owner: `postgres` when this process is root.
    private static func asOwner(_ command: String) throws {
        if getuid() == 0 {
            try run("/bin/su", ["postgres", "-s", "/bin/sh", "-c", command])
        } else {
            try run("/bin/sh", ["-c", command])
        }
    }

    /// Runs a command to its end; its standard output.
    ///
    /// A ``SpawnedProcess`` with its output in files: `pg_ctl start` leaves a server behind
    /// that inherits the command's descriptors, so a pipe would never reach end of file.
    @discardableResult
    private static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let base = NSTemporaryDirectory() + "dally-pg-run-" + UUID().uuidString
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".err")
        }
        let child = try SpawnedProcess(executable, arguments, standardOutput: base + ".out", standardError: base + ".err")
        child.waitUntilExit()
        let out = FileManager.default.contents(atPath: base + ".out") ?? Data()
        let err = FileManager.default.contents(atPath: base + ".err") ?? Data()
        guard child.succeeded else {
            throw TestSupportError(
                "\(executable) \(arguments.joined(separator: " ")) exited with status \(child.terminationStatus): "
                    + String(decoding: err, as: UTF8.self))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
