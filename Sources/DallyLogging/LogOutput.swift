import Logging

/// Where every command's logs go: standard error, as text for people or as JSON lines for
/// collectors, at one level. Standard output stays for what a command prints on purpose (a
/// benchmark's figures, `--check`'s verdict).
///
/// ```swift
/// LogOutput.bootstrap(level: "info", format: "json")
/// ```
public enum LogOutput {
    /// Installs the process's log handler; once per process, before the first logger is made.
    ///
    /// - Parameters:
    ///   - level: a `log_level` value (`trace` … `critical`); an unknown one means `info`.
    ///   - format: `text` or `json` (`server.log_format`).
    public static func bootstrap(level: String, format: String = "text") {
        let level = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { label in
            guard format == "json" else {
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            return JSONLogHandler(label: label, level: level)
        }
    }
}
