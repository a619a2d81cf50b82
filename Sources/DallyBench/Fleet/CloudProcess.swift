import AsyncHTTPClient
import DallyTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `dally cloud` as a child process, so that its CPU time is its own and can be read from
/// `/proc/<pid>/stat` while gateways in this process load it.
final class CloudProcess: Sendable {
    let process: SpawnedProcess
    let port: Int
    let logPath: String

    var url: String { "http://127.0.0.1:\(port)" }

    /// Starts `dally cloud --config <config> --port <a free port>` and waits up to a minute for
    /// its `/healthz`.
    init(dally: String, config: String, http: BenchHTTP) async throws {
        port = try FreePort.find()
        logPath = config + ".log"
        process = try SpawnedProcess(dally, ["cloud", "--config", config, "--port", String(port)], standardError: logPath)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if (try? await http.call(.GET, url + "/healthz"))?.status == 200 { return }
            guard process.isRunning else {
                throw BenchError("dally cloud exited before serving:\n\(Self.tail(logPath))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(process.processIdentifier, SIGKILL)
        throw BenchError("dally cloud did not answer /healthz within a minute:\n\(Self.tail(logPath))")
    }

    /// The child's user + system CPU time so far, in seconds (`/proc/<pid>/stat`, fields 14
    /// and 15, in clock ticks).
    var cpuSeconds: Double {
        get throws {
            let text = try String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)
            // The command name (field 2) may hold spaces; the fields after it are plain.
            guard let close = text.lastIndex(of: ")") else { throw BenchError("unreadable /proc stat: \(text)") }
            let fields = text[text.index(after: close)...].split(separator: " ")
            // fields[0] is field 3 (state), so utime (14) and stime (15) are at 11 and 12.
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
                throw BenchError("unreadable /proc stat: \(text)")
            }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
    }

    /// SIGTERM, then waits for the exit (the cloud answers its notify polls as it stops).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    private static func tail(_ path: String) -> String {
        String(((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").suffix(2000))
    }
}
