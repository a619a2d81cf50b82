import Foundation
import Logging
import ServiceLifecycle

/// A benchmark that could not run to the end (a refused request, a server that did not start).
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Services (a cloud's, or gateways') running in their own group until ``stop()``, with the
/// ports their HTTP servers bound.
final class BenchServices: Sendable {
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    /// The bound port of each server, by the index it reported itself with.
    let ports: [Int]

    private init(group: ServiceGroup, task: Task<Void, any Error>, ports: [Int]) {
        self.group = group
        self.task = task
        self.ports = ports
    }

    /// Runs the services `make` returns and waits until `servers` HTTP servers listen; `make`
    /// receives the callback each server reports `(its index, its port)` through.
    static func start(
        servers: Int, _ make: (@escaping @Sendable (Int, Int) async -> Void) throws -> [any Service]
    ) async throws -> BenchServices {
        let (reports, continuation) = AsyncStream<(Int, Int)>.makeStream()
        let services = try make { index, port in continuation.yield((index, port)) }
        var configuration = ServiceGroupConfiguration(services: services, logger: Logger(label: "dally.bench"))
        // A service that ignores the shutdown request (a long-poll it cannot cut short) is
        // cancelled after this, so the process always exits.
        configuration.maximumGracefulShutdownDuration = .seconds(15)
        let group = ServiceGroup(configuration: configuration)
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var ports = Array(repeating: 0, count: servers)
        var reported = 0
        for await (index, port) in reports where ports.indices.contains(index) {
            ports[index] = port
            reported += 1
            if reported == servers { break }
        }
        guard reported == servers else {
            try await task.value
            throw BenchError("the services stopped before their servers listened")
        }
        return BenchServices(group: group, task: task, ports: ports)
    }

    /// Stops the services gracefully and waits until they have.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

/// Durations of one kind, in milliseconds.
struct Samples {
    private(set) var values: [Double] = []

    mutating func add(_ duration: Duration) { values.append(duration.benchMilliseconds) }

    mutating func merge(_ other: Samples) { values += other.values }

    var count: Int { values.count }
    var total: Double { values.reduce(0, +) }

    /// The nearest-rank percentile `p` (0...100); 0 when empty.
    func percentile(_ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(Swift.max(rank, 1), sorted.count) - 1]
    }

    var max: Double { values.max() ?? 0 }
}

extension Duration {
    var benchMilliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    var benchSeconds: Double { benchMilliseconds / 1000 }
}

/// Output helpers shared by the bench commands.
enum BenchOutput {
    /// `12.3`, `1234` — a figure with a precision that suits its size.
    static func figure(_ value: Double) -> String {
        if value >= 1000 { return String(Int(value.rounded())) }
        if value >= 100 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    /// Prints a table, columns padded to their widest cell; the first column left-aligned,
    /// the others right-aligned, except the last when it holds notes.
    static func table(_ rows: [[String]], notes: Bool = false) {
        guard let width = rows.map(\.count).max() else { return }
        var widths = Array(repeating: 0, count: width)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = Swift.max(widths[i], cell.count) } }
        for row in rows {
            var line = ""
            for (i, cell) in row.enumerated() {
                let pad = String(repeating: " ", count: widths[i] - cell.count)
                let left = i == 0 || (notes && i == width - 1)
                line += (i == 0 ? "" : "  ") + (left ? cell + (i == width - 1 ? "" : pad) : pad + cell)
            }
            print(line)
        }
    }

    /// `RESULT <name> key=value …`: the line `tools/bench` scripts collect.
    static func resultLine(_ name: String, _ fields: [(String, String)]) -> String {
        (["RESULT", name] + fields.map { "\($0)=\($1)" }).joined(separator: " ")
    }

    /// `p50_ms=… p90_ms=… max_ms=…` fields of `samples`.
    static func percentileFields(_ samples: Samples, _ percentiles: [Int]) -> [(String, String)] {
        percentiles.map { ("p\($0)_ms", figure(samples.percentile(Double($0)))) } + [("max_ms", figure(samples.max))]
    }

    /// A fresh directory under the system's temporary directory.
    static func temporaryDirectory(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "dally-bench-\(name)-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
