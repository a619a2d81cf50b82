import DallyTestSupport
import Foundation

/// `dally client …` run as a child process, as a person or a script runs it.
struct CLIProcess {
    struct Result {
        let status: Int32
        let output: Data
        let stderr: String
        var stdout: String { String(decoding: output, as: UTF8.self) }
        /// Standard output's non-empty lines.
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The `dally` executable built next to the test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("dally")
    }

    /// Runs `dally client <arguments>` with `environment` added to a clean one, `input` on its
    /// standard input (or the file `inputPath`); waits for it to exit.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], input: String? = nil, inputPath: String? = nil
    ) async throws -> Result {
        let out = ScratchSpace.path("dally-cli-")
        defer { for ext in [".in", ".out", ".err"] { try? FileManager.default.removeItem(atPath: out + ext) } }
        try (input ?? "").write(toFile: out + ".in", atomically: false, encoding: .utf8)
        let executable = executable.path
        let status = try await offPool {
            let child = try SpawnedProcess(
                executable, ["client"] + arguments, environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 },
                standardInput: inputPath ?? out + ".in", standardOutput: out + ".out", standardError: out + ".err")
            child.waitUntilExit()
            return child.terminationStatus
        }
        return Result(
            status: status, output: FileManager.default.contents(atPath: out + ".out") ?? Data(),
            stderr: (try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? "")
    }

    /// Runs `dally client <arguments>` with its standard output a pipe whose reader has gone
    /// (closed at once, as `| head` closes it once it has its lines); its exit and standard
    /// error.
    static func runIntoClosedPipe(_ arguments: [String], environment: [String: String]) async throws -> Result {
        let err = ScratchSpace.path("dally-cli-") + ".err"
        defer { try? FileManager.default.removeItem(atPath: err) }
        let executable = executable.path
        let status = try await offPool {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw TestSupportError("pipe() failed: errno \(errno)") }
            close(ends[0])
            defer { close(ends[1]) }
            let child = try SpawnedProcess(
                executable, ["client"] + arguments, environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 },
                outputDescriptor: ends[1], standardError: err)
            child.waitUntilExit()
            return child.terminationStatus
        }
        return Result(status: status, output: Data(), stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }

    /// `dally client <arguments>` left running, its standard output as lines as they come.
    final class Running: @unchecked Sendable {
        let process: SpawnedProcess
        let lines: AsyncStream<String>
        private let pipe = Pipe()

        init(_ arguments: [String], environment: [String: String]) throws {
            let (lines, continuation) = AsyncStream<String>.makeStream()
            self.lines = lines
            let pending = LineBuffer()
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty {
                    handle.readabilityHandler = nil
                    continuation.finish()
                    return
                }
                for line in pending.add(data) { continuation.yield(line) }
            }
            process = try SpawnedProcess(
                CLIProcess.executable.path, ["client"] + arguments,
                environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 },
                outputDescriptor: pipe.fileHandleForWriting.fileDescriptor)
            // The child holds the write end now; the stream ends when it exits.
            try pipe.fileHandleForWriting.close()
        }

        func stop() {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }
}
