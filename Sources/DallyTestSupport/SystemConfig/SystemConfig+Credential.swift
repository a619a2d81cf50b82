extension SystemConfig {
    /// A gateway the cloud knows: its id and the secret it authenticates with (HTTP Basic).
    public struct Credential: Sendable {
        public var id: String
        public var secret: String

        public init(id: String, secret: String) {
            self.id = id
            self.secret = secret
        }
    }
}
