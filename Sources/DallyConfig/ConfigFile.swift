import Foundation
import TOMLKit

/// Reads a TOML file and turns parse and validation errors into ``ConfigError``s that name
/// the file and, where it can be found, the line.
enum ConfigFile {
    static func read<Config>(
        path: String,
        parse: (TOMLSection) throws(KeyError) -> Config
    ) throws(ConfigError) -> Config {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(file: path, key: nil, line: nil, reason: "cannot read the file: \(error.localizedDescription)")
        }
        return try self.parse(text: text, file: path, parse: parse)
    }

    static func parse<Config>(
        text: String,
        file: String,
        parse: (TOMLSection) throws(KeyError) -> Config
    ) throws(ConfigError) -> Config {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigError(file: file, key: nil, line: error.source.begin.line, reason: "syntax error: \(error.description)")
        } catch {
            throw ConfigError(file: file, key: nil, line: nil, reason: "syntax error: \(error)")
        }
        do {
            return try parse(TOMLSection(table, path: ""))
        } catch {
            throw ConfigError(
                file: file, key: error.key, line: line(of: error.key, in: text, reason: error.reason), reason: error.reason)
        }
    }

    /// The line that sets the last component of `keyPath`, when exactly one place in the file
    /// (a line of its own or inside an inline table) sets a key of that name. TOMLKit does not
    /// expose the positions of values, so anything ambiguous, and any missing key, gets no line
    /// rather than a wrong one.
    static func line(of keyPath: String, in text: String, reason: String = "") -> Int? {
        guard !reason.hasPrefix("missing"), let last = keyPath.split(separator: ".").last else { return nil }
        let key = last.split(separator: "[").first.map(String.init) ?? String(last)
        let escaped = NSRegularExpression.escapedPattern(for: key)
        guard let setter = try? NSRegularExpression(pattern: "(^|[\\s{,])\(escaped)\\s*="),
            let header = try? NSRegularExpression(pattern: "^\\s*\\[\\[?([A-Za-z0-9_]+\\.)*\(escaped)\\]\\]?")
        else { return nil }
        var found: Int?
        var places = 0
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = String(line.prefix { $0 != "#" })
            let range = NSRange(content.startIndex..., in: content)
            let count = setter.numberOfMatches(in: content, range: range) + header.numberOfMatches(in: content, range: range)
            guard count > 0 else { continue }
            places += count
            found = number + 1
        }
        return places == 1 ? found : nil
    }
}
