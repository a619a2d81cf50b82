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
            throw ConfigError(file: file, key: error.key, line: line(of: error.key, in: text), reason: error.reason)
        }
    }

    /// The line that sets the last component of `keyPath`, when exactly one line of the file
    /// sets a key of that name (TOMLKit does not expose the positions of values).
    static func line(of keyPath: String, in text: String) -> Int? {
        guard let last = keyPath.split(separator: ".").last else { return nil }
        let key = last.split(separator: "[").first.map(String.init) ?? String(last)
        var found: Int?
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
            let setsKey = trimmed.hasPrefix(key) && trimmed.dropFirst(key.count).drop(while: { $0 == " " }).hasPrefix("=")
            let opensTable = trimmed.hasPrefix("[\(key)]") || trimmed.hasPrefix("[[\(key)]]")
                || trimmed.hasPrefix("[") && trimmed.hasSuffix(".\(key)]")
            guard setsKey || opensTable else { continue }
            if found != nil { return nil }
            found = number + 1
        }
        return found
    }
}
