import Foundation
import Logging
import ServiceLifecycle

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

    /// Starts a system under `root`, measures it, and stops it, after a failed measurement too;
    /// then removes `root` unless `keep` (printing where it stays). The first error wins.
    static func measured<System, Figures>(
        in root: String, keep: Bool, start: () async throws -> System, measure: (System) async throws -> Figures,
        stop: (System) async throws -> Void
    ) async throws -> Figures {
        let outcome: Result<Figures, any Error>
        do {
            let system = try await start()
            do {
                outcome = .success(try await measure(system))
            } catch {
                outcome = .failure(error)
            }
            try await stop(system)
        } catch {
            if !keep { try? FileManager.default.removeItem(atPath: root) }
            throw error
        }
        if keep { print("kept \(root)") } else { try? FileManager.default.removeItem(atPath: root) }
        return try outcome.get()
    }
}
