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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, executable] + arguments
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { exited.continuation.yield($0.terminationStatus) }
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        var statuses = exited.stream.makeAsyncIterator()
        guard await statuses.next() == 0 else { throw TestFailure("python3 (needed to measure memory) failed") }
        let fields = String(decoding: printed, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard fields.count == 2 else { throw TestFailure("unreadable measurement: \(String(decoding: printed, as: UTF8.self))") }
        return Outcome(status: Int32(fields[0]), peakMemory: fields[1] * 1024)
    }
}
