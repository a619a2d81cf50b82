import Logging
import Synchronization

/// What a logger was told, a line per call: its level, message and metadata, for tests that
/// check what an operator would read.
///
/// ```swift
/// let told = ToldLines()
/// let logger = told.logger()
/// logger.warning("cut", metadata: ["uplink": "lte"])
/// told.lines   // ["warning cut uplink=lte"]
/// ```
public final class ToldLines: Sendable {
    private let told = Mutex<[String]>([])

    public init() {}

    public var lines: [String] { told.withLock { $0 } }

    /// A logger at `trace` that tells this.
    public func logger(label: String = "test") -> Logger {
        Logger(label: label) { _ in Handler(told: self) }
    }

    struct Handler: LogHandler {
        let told: ToldLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(
            level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String,
            function: String, line: UInt
        ) {
            let all = self.metadata.merging(metadata ?? [:]) { _, new in new }
            let pairs = all.keys.sorted().map { "\($0)=\(all[$0].map { "\($0)" } ?? "")" }
            told.told.withLock { $0.append((["\(level)", "\(message)"] + pairs).joined(separator: " ")) }
        }
    }
}
