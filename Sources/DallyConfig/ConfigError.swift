/// A configuration file that cannot be used, with everything needed to fix it: the file,
/// the key (as a dotted path such as `tables[1].columns[2]`), the line where it is known,
/// and the reason.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let key: String?
    public let line: Int?
    public let reason: String

    public init(file: String, key: String?, line: Int?, reason: String) {
        self.file = file
        self.key = key
        self.line = line
        self.reason = reason
    }

    public var description: String {
        var location = file
        if let line { location += ":\(line)" }
        if let key { return "\(location): \(key): \(reason)" }
        return "\(location): \(reason)"
    }
}

/// A problem found while reading a section, before the file name and line are attached.
struct KeyError: Error {
    let key: String
    let reason: String
}
