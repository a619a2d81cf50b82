import Logging

/// Logging for the benchmarks: to standard error at the `--log-level` asked for, so that the
/// figures on standard output stay clean.
enum BenchLogging {
    static func bootstrap(level: String) {
        let level = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
