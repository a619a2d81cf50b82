import Foundation
import Testing

@testable import DallyConfig

// Helpers shared by the gateway and cloud configuration tests. Every text is parsed as a file
// named "dally.toml".

/// The file name the tests give every configuration.
let testFileName = "dally.toml"

/// Parses `text` with `parse`, returning the error it throws, or nil when it is valid.
func configError<Config>(_ text: String, _ parse: (String, String) throws(ConfigError) -> Config) -> ConfigError? {
    do {
        _ = try parse(text, testFileName)
        return nil
    } catch {
        return error
    }
}

/// Asserts that `parse` refuses `text` for `key` with a reason containing `reason`.
@discardableResult
func expectRefusal<Config>(
    _ text: String, key: String?, reason: String,
    parse: (String, String) throws(ConfigError) -> Config,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ConfigError? {
    guard let error = configError(text, parse) else {
        Issue.record("expected the configuration to be refused for \(key ?? "nil")", sourceLocation: sourceLocation)
        return nil
    }
    #expect(error.file == testFileName, sourceLocation: sourceLocation)
    #expect(error.key == key, "\(error)", sourceLocation: sourceLocation)
    #expect(error.reason.contains(reason), "\(error)", sourceLocation: sourceLocation)
    return error
}

/// The 1-based number of the only line of `text` that contains `fragment`.
func line(containing fragment: String, in text: String) -> Int? {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let matches = lines.indices.filter { lines[$0].contains(fragment) }
    return matches.count == 1 ? matches[0] + 1 : nil
}

/// The number of the last line containing `fragment`.
func lastLine(containing fragment: String, in text: String) -> Int? {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    return lines.lastIndex { $0.contains(fragment) }.map { $0 + 1 }
}

/// A file shipped in the repository's `config` directory, found from this source file's path.
func shippedConfig(_ name: String) -> String {
    URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // DallyConfigTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // the repository
        .appendingPathComponent("config")
        .appendingPathComponent(name)
        .path
}
