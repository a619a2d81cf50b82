extension SystemConfig {
    /// A `[[clients]]` entry every gateway admits: a bearer token and the tables it may read
    /// and write (`*`: all).
    public struct Client: Sendable {
        public var name: String
        public var token: String
        public var read: [String]
        public var write: [String]?

        public init(name: String, token: String, read: [String] = ["*"], write: [String]? = ["*"]) {
            self.name = name
            self.token = token
            self.read = read
            self.write = write
        }

        var toml: String {
            var lines = ["[[clients]]", "name = \(TOMLText.string(name))", "token = \(TOMLText.string(token))"]
            lines.append("read = \(TOMLText.array(read))")
            if let write { lines.append("write = \(TOMLText.array(write))") }
            return lines.joined(separator: "\n")
        }
    }
}
