import DallyCore
import Foundation
import Logging

/// Writes each log record as one JSON object on one line of standard error, for log
/// collectors (journald, Loki, a container runtime): `time` (UTC, ISO 8601 with
/// milliseconds), `level`, `label`, `message`, then every metadata key as a field of its own.
///
/// ```json
/// {"time":"2026-11-25T05:20:01.234Z","level":"info","label":"dally.gateway","message":"gateway listening","address":"127.0.0.1:8080"}
/// ```
///
/// Install it with `LoggingSystem.bootstrap { JSONLogHandler(label: $0, level: .info) }`.
/// Metadata values that are strings (or print as strings) become JSON strings; lists and
/// dictionaries become JSON arrays and objects.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String
    private let write: @Sendable ([UInt8]) -> Void

    /// - Parameter write: where a finished line goes (tests collect them); standard error
    ///   unless given, each line in one write so that lines from several threads never mix.
    public init(label: String, level: Logger.Level, write: (@Sendable ([UInt8]) -> Void)? = nil) {
        self.label = label
        logLevel = level
        self.write = write ?? { line in StandardError.write(line) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var writer = JSONWriter(capacity: 256)
        writer.raw("{\"time\":")
        writer.string(Self.timestamp(Date()))
        writer.raw(",\"level\":")
        writer.string(event.level.rawValue)
        writer.raw(",\"label\":")
        writer.string(label)
        writer.raw(",\"message\":")
        writer.string(event.message.description)
        let fields = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for key in fields.keys.sorted() where !["time", "level", "label", "message"].contains(key) {
            writer.raw(",")
            writer.key(key)
            if let value = fields[key] { Self.write(value, to: &writer) }
        }
        writer.raw("}\n")
        write(writer.bytes)
    }

    private static func write(_ value: Logger.Metadata.Value, to writer: inout JSONWriter) {
        switch value {
        case .string(let text): writer.string(text)
        case .stringConvertible(let convertible): writer.string(convertible.description)
        case .array(let values):
            writer.raw("[")
            for (index, element) in values.enumerated() {
                if index > 0 { writer.raw(",") }
                write(element, to: &writer)
            }
            writer.raw("]")
        case .dictionary(let members):
            writer.raw("{")
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { writer.raw(",") }
                writer.key(key)
                if let member = members[key] { write(member, to: &writer) }
            }
            writer.raw("}")
        }
    }

    /// `2026-11-25T05:20:01.234Z`.
    static func timestamp(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let fraction = String(milliseconds % 1000)
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))."
            + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }
}
