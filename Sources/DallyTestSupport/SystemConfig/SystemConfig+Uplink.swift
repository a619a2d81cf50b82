extension SystemConfig {
    /// An `[[uplinks]]` entry: a named way to the cloud, of a network class, at a URL (often a
    /// proxy or relay that sees what crosses it). Probes are off unless asked for: tests and
    /// benchmarks say when a network is up.
    public struct Uplink: Sendable {
        public var name: String
        public var networkClass: String
        public var url: String
        public var probeInterval: String
        /// `down_probe_interval`, when set.
        public var downProbeInterval: String?
        /// Sends as soon as changes exist while usable, instead of at the tables' `max_delay`.
        public var eager: Bool

        public init(
            _ name: String, class networkClass: String, url: String, probeInterval: String = "off", eager: Bool = false
        ) {
            self.name = name
            self.networkClass = networkClass
            self.url = url
            self.probeInterval = probeInterval
            self.eager = eager
        }

        var toml: String {
            [
                "[[uplinks]]", "name = \(TOMLText.string(name))", "class = \(TOMLText.string(networkClass))",
                "url = \(TOMLText.string(url))", "probe_interval = \(TOMLText.string(probeInterval))",
            ].joined(separator: "\n") + (eager ? "\neager = true" : "")
                + (downProbeInterval.map { "\ndown_probe_interval = \(TOMLText.string($0))" } ?? "")
        }
    }
}
