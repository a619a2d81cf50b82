import DallyTestSupport
import Foundation

/// A child process run to its end, and its own peak resident memory: what one `dally client`
/// run held, whatever else the test process runs meanwhile.
///
/// Linux gives an exec'd child the peak of the process that spawned it (the test process,
/// large, with gateways inside), so the child is started by a small `python3` that reports
/// its children's `ru_maxrss`.
enum MeasuredProcess {
    struct Outcome {
        let status: Int32
        /// Peak resident memory, bytes.
        let peakMemory: Int
    }

    static let script = """
        import resource, subprocess, sys
        status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        """

    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) async throws -> Outcome {
        let script = Self.script
        let (status, text) = try await offPool {
            try SpawnedProcess.output(
                "/usr/bin/env", ["python3", "-c", script, executable] + arguments,
                environment: ["PATH": "/usr/bin:/bin"].merging(environment) { $1 })
        }
        guard status == 0 else { throw TestFailure("python3 (needed to measure memory) failed") }
        let printed = Data(text.utf8)
        let fields = String(decoding: printed, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard fields.count == 2 else { throw TestFailure("unreadable measurement: \(String(decoding: printed, as: UTF8.self))") }
        return Outcome(status: Int32(fields[0]), peakMemory: fields[1] * 1024)
    }
}
