import DallyTestSupport
import Foundation
import Testing

/// `dally bench …` runs the benchmarks' own executable, as the docs and the issues name them.
@Suite struct BenchCommandTests {
    static var benchBeside: Bool {
        let directory = GatewayProcess.executable.deletingLastPathComponent().path
        return FileManager.default.isExecutableFile(atPath: GatewayProcess.executable.path)
            && FileManager.default.isExecutableFile(atPath: directory + "/dally-bench")
    }

    /// The replica's drain benchmark through `dally bench`: every row written is sent and
    /// settled, in the batches asked for.
    @Test(.enabled(if: benchBeside))
    func dallyBenchRunsTheDrainBenchmark() async throws {
        let out = ScratchSpace.path("dally-bench-")
        defer { for ext in [".out", ".err"] { try? FileManager.default.removeItem(atPath: out + ext) } }
        let status = try await offPool {
            let child = try SpawnedProcess(
                GatewayProcess.executable.path,
                ["bench", "drain", "--rows", "300", "--write-rows", "100", "--rows-per-batch", "100", "--synchronous", "normal"],
                environment: ["PATH": "/usr/bin:/bin"], standardOutput: out + ".out", standardError: out + ".err")
            child.waitUntilExit()
            return child.terminationStatus
        }
        let output = (try? String(contentsOfFile: out + ".out", encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: out + ".err", encoding: .utf8)) ?? ""
        #expect(status == 0, "\(errors)")
        #expect(output.contains("RESULT drain_write rows=300 "), "\(output)")
        #expect(output.contains("RESULT drain_settle rows=300 "), "\(output)")
        let total = output.split(separator: "\n").first { $0.hasPrefix("RESULT drain_total ") }
        #expect(total?.hasSuffix(" batches=3") == true, "\(output)")
    }
}
