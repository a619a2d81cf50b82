extension SystemConfig {
    /// A gateway's `[cloud]` section besides its id and secret (which come from the system's
    /// credentials): where the cloud is and how the link behaves. Nil settings keep the defaults.
    public struct CloudLink: Sendable {
        public var url: String
        /// More cloud nodes after `url`: written as `url = [url, standby…]`.
        public var standbyURLs: [String] = []
        public var notifyWait: String?
        /// Network classes the notify long-poll may use; `[]` turns it off.
        public var notifyNetworks: [String]?
        public var retryMin: String?
        public var retryMax: String?
        public var level: Int?
        public var dictionaryBytes: Int?
        /// Further `key = value` lines of `[cloud]`, as written (`request_timeout`, the
        /// progress rules of ``DallyConfig/LinkTimings``…).
        public var lines: [String]

        public init(
            url: String, notifyWait: String? = nil, notifyNetworks: [String]? = nil, retryMin: String? = nil,
            retryMax: String? = nil, level: Int? = nil, dictionaryBytes: Int? = nil, lines: [String] = []
        ) {
            self.lines = lines
            self.url = url
            self.notifyWait = notifyWait
            self.notifyNetworks = notifyNetworks
            self.retryMin = retryMin
            self.retryMax = retryMax
            self.level = level
            self.dictionaryBytes = dictionaryBytes
        }

        func toml(gatewayID: String, secret: String) -> [String] {
            var lines = [
                "[cloud]",
                standbyURLs.isEmpty ? "url = \(TOMLText.string(url))" : "url = \(TOMLText.array([url] + standbyURLs))",
                "gateway_id = \(TOMLText.string(gatewayID))",
                "secret = \(TOMLText.string(secret))",
            ]
            if let level { lines.append("level = \(level)") }
            if let dictionaryBytes { lines.append("dictionary_bytes = \(dictionaryBytes)") }
            if let notifyWait { lines.append("notify_wait = \(TOMLText.string(notifyWait))") }
            if let notifyNetworks { lines.append("notify_networks = \(TOMLText.array(notifyNetworks))") }
            if let retryMin { lines.append("retry_min = \(TOMLText.string(retryMin))") }
            if let retryMax { lines.append("retry_max = \(TOMLText.string(retryMax))") }
            return lines + self.lines
        }
    }
}
