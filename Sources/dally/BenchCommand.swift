import ArgumentParser
import DallyLogging
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `dally bench …`: runs `dally-bench` with the same arguments, as the issues and the docs
/// name the benchmarks (`dally bench apply`, `dally bench drain`, …).
///
/// The benchmarks are an executable of their own, so that the shipped `dally` carries none of
/// their code (or their test-support dependencies); this finds it beside `dally`, where `swift
/// build -c release --product dally-bench` puts it next to the release `dally`, else on `PATH`,
/// and replaces this process with it.
///
/// ```sh
/// swift build -c release --product dally --product dally-bench
/// .build/release/dally bench apply --rows-per-batch 5000 --batches 20
/// ```
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run a release benchmark (dally-bench): apply, drain, propagation, slowlink, fleet, …",
        discussion: "Every argument goes to dally-bench as given; `dally bench help` lists its benchmarks."
    )

    @Argument(parsing: .captureForPassthrough, help: "The benchmark and its options, e.g. `apply --batches 40`.")
    var arguments: [String] = []

    func run() throws {
        guard let path = Self.benchExecutable() else {
            Self.fail(
                """
                dally-bench is not installed beside \(Self.ownPath ?? "dally") nor on PATH: \
                build it with `swift build -c release --product dally-bench` (the packages ship `dally` alone)
                """)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        execv(path, argv)
        // execv returns only when it failed.
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        Self.fail("cannot run \(path): \(reason)")
    }

    /// Says why on standard error and exits 1: no usage text, the arguments were not the problem.
    private static func fail(_ message: String) -> Never {
        StandardError.line("dally: bench: \(message)")
        Foundation.exit(1)
    }

    /// This executable's own path, resolved (`/proc/self/exe`).
    private static var ownPath: String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// `dally-bench` beside this executable, else the first on `PATH`.
    static func benchExecutable() -> String? {
        let directories =
            [ownPath.map { ($0 as NSString).deletingLastPathComponent }].compactMap { $0 }
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return directories.map { $0 + "/dally-bench" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
