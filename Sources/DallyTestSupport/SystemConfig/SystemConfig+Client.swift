extension SystemConfig {
    /// A `[[clients]]` entry every gateway admits: a bearer token and the tables it may read
    /// and write (`*`: all).
    public struct Client: Sendable {
        public var name: String
        public var token: String
        public var read: [String]
        public var write: [String]?
        /// The token's scope as TOML's inline table: `{ orders = { customer = "Ada" } }`.
        public var scope: String?

        public init(name: String, token: String, read: [String] = ["*"], write: [String]? = ["*"], scope: String? = nil) {
            self.name = name
            self.token = token
            self.read = read
            self.write = write
            self.scope = scope
        }

        var toml: String {
            var lines = ["[[clients]]", "name = \(TOMLText.string(name))", "token = \(TOMLText.string(token))"]
            lines.append("read = \(TOMLText.array(read))")
            if let write { lines.append("write = \(TOMLText.array(write))") }
            if let scope { lines.append("scope = \(scope)") }
            return lines.joined(separator: "\n")
        }
    }
}
