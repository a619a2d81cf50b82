import DallyTestSupport
import Foundation

/// `dally gateway` (or `dally cloud`) as a real child process, for tests that kill or stop it.
final class GatewayProcess: @unchecked Sendable {
    let process: SpawnedProcess
    private(set) var port = 0
    /// The child's log (its standard error).
    let logPath: String

    /// The `dally` executable built next to the test bundle.
    static var executable: URL {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundleDirectory.appendingPathComponent("dally")
    }

    /// Starts `dally <command> --config <file> --port 0` and waits for it to say where it
    /// listens (in text or JSON logs).
    init(config: String, command: String = "gateway") throws {
        logPath = config + "." + UUID().uuidString + ".log"
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else {
            throw TestFailure("cannot create the gateway's log file \(logPath)")
        }
        process = try SpawnedProcess(
            Self.executable.path, [command, "--config", config, "--port", "0"], standardError: logPath)
        // The log is a file, not a pipe, so the child never blocks on it; poll it for the port
        // (logged at info: the configuration must log at least that), for at most a minute.
        for _ in 0..<6_000 where port == 0 {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let range = log.range(of: #"address"?[=:]"?127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                port = Int(log[range].split(separator: ":").last ?? "") ?? 0
            } else if !process.isRunning {
                throw TestFailure("dally \(command) exited before listening:\n\(log)")
            } else {
                usleep(10_000)
            }
        }
        if port == 0 {
            kill(process.processIdentifier, SIGKILL)
            throw TestFailure("dally \(command) did not log where it listens within a minute (log_level above info?)")
        }
    }

    /// SIGTERM, as systemd or a container runtime stops a service; the exit status.
    func terminate() -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The child's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGKILL: no shutdown code runs, exactly like a crash or a power cut of the process.
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
