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
            throw ConfigError(file: path, key: nil, line: nil, reason: "cannot read the file: \(unreadable(path, error))")
        }
        return try self.parse(text: text, file: path, parse: parse)
    }

    /// Why `path` could not be read, in the system's words ("no such file", "permission
    /// denied"), not Foundation's "The operation could not be completed. The file doesn't exist."
    private static func unreadable(_ path: String, _ error: any Error) -> String {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        // Found and readable: what failed is reading its bytes as UTF-8.
        return error is CocoaError ? "it is not UTF-8 text" : error.localizedDescription
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
    /// (a line of its own or inside an inline table) sets a key of that name: in the whole file,
    /// or, for a key of an array of tables (`tables[2].name`), in that entry's block (the third
    /// `[[tables]]` up to the next header), where every entry sets the same keys. TOMLKit does
    /// not expose the positions of values, so anything ambiguous, and any missing key, gets no
    /// line rather than a wrong one.
    static func line(of keyPath: String, in text: String, reason: String = "") -> Int? {
        guard !reason.hasPrefix("missing"), let last = keyPath.split(separator: ".").last else { return nil }
        let key = last.split(separator: "[").first.map(String.init) ?? String(last)
        let escaped = NSRegularExpression.escapedPattern(for: key)
        guard let setter = try? NSRegularExpression(pattern: "(^|[\\s{,])\(escaped)\\s*="),
            let header = try? NSRegularExpression(pattern: "^\\s*\\[\\[?([A-Za-z0-9_]+\\.)*\(escaped)\\]\\]?")
        else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.prefix { $0 != "#" }) }
        var searched = lines.indices
        if let entry = arrayEntry(keyPath), let block = block(of: entry, in: lines) {
            searched = block
        }
        var found: Int?
        var places = 0
        for number in searched {
            let content = lines[number]
            let range = NSRange(content.startIndex..., in: content)
            let count = setter.numberOfMatches(in: content, range: range) + header.numberOfMatches(in: content, range: range)
            guard count > 0 else { continue }
            places += count
            found = number + 1
        }
        return places == 1 ? found : nil
    }

    /// `("tables", 2)` for `tables[2].name` or `tables[2].upload.max_delay`; nil for a key of no
    /// array entry.
    private static func arrayEntry(_ keyPath: String) -> (array: String, index: Int)? {
        guard let first = keyPath.split(separator: ".").first, keyPath.contains("."),
            let open = first.firstIndex(of: "["), first.last == "]",
            let index = Int(first[first.index(after: open)..<first.index(before: first.endIndex)])
        else { return nil }
        return (String(first[..<open]), index)
    }

    /// The lines of the `index`-th `[[array]]` entry: from its header up to the next header
    /// that is not one of the entry's own sub-tables (`[array.upload]`). Nil when the file has
    /// no such entry written as a header (an inline array of tables): the whole file is searched.
    private static func block(of entry: (array: String, index: Int), in lines: [String]) -> Range<Int>? {
        let trimmed = lines.map { $0.trimmingCharacters(in: .whitespaces) }
        let headers = trimmed.indices.filter { trimmed[$0] == "[[\(entry.array)]]" }
        guard entry.index < headers.count else { return nil }
        let start = headers[entry.index] + 1
        let end =
            trimmed[start...].firstIndex { $0.hasPrefix("[") && !$0.hasPrefix("[\(entry.array).") } ?? lines.count
        return start..<end
    }
}
