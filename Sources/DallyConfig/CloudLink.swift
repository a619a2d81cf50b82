import DallyCore
import Foundation
import TOMLKit

/// How a gateway reaches its cloud: the gateway's `[cloud]` section.
///
/// ```toml
/// [cloud]
/// url = "http://127.0.0.1:8090"
/// gateway_id = "gateway-a"
/// secret = "dev-gateway-a-secret-change-me"
/// ```
public struct CloudLink: Sendable, Equatable {
    /// How request bodies sent to the cloud are compressed. The names only: DallyConfig does
    /// not depend on a compression library.
    public enum Compression: String, Sendable, CaseIterable {
        case zstd
        case deflate
        case none

        /// The levels this compression accepts; nil when it takes none.
        public var levels: ClosedRange<Int>? {
            switch self {
            case .zstd: 1...19
            case .deflate: 1...9
            case .none: nil
            }
        }
    }

    /// The cloud's base URL, `http://` or `https://`, without a trailing slash: the first
    /// node of `url` when it lists several.
    public var url: String
    /// The other cloud nodes `url` lists after the first, in order: where requests go while
    /// the node in use does not answer (several `dally cloud` nodes over one PostgreSQL).
    public var standbyURLs: [String] = []

    /// Every node, the preferred first.
    public var nodeURLs: [String] { [url] + standbyURLs }
    /// This gateway's id at the cloud: one of the cloud's `[[gateways]]`.
    public var gatewayID: String
    /// The secret this gateway proves its id with; the cloud holds the same. Nil when the
    /// gateway proves its id with its client certificate alone (`client_cert`).
    public var secret: String?
    /// How request bodies are compressed.
    public var compression: Compression = .zstd
    /// The compression level, within ``Compression/levels``; unused for ``Compression/none``.
    public var level = 6
    /// The size of the dictionary trained per table from its outgoing sections, in bytes; 0
    /// turns dictionaries off. Used with zstd only.
    public var dictionaryBytes = 4_096
    /// A table whose pending changes pass this many bytes is sent at once, before its deadline
    /// (its `upload.max_delay`).
    public var flushBytes = 1_048_576
    /// The network classes over which the notify long-poll may be held. Empty means never:
    /// downloads then go only by each table's `download.period`.
    public var notifyNetworks: [String]
    /// How long the cloud holds a notify long-poll before answering that nothing changed.
    public var notifyWait: Duration = .seconds(60)
    /// Whether notifications come as a stream (one request held for ``notifyWait``, a line per
    /// change, PROTOCOL.md §7.3.1) rather than as long-polls (one request per change). A cloud
    /// that does not stream is polled instead.
    public var notifyStream = true
    /// The fixed part of one request's bound: the wait for the cloud's answer once a request's
    /// bytes have moved (a notify long-poll may take ``notifyWait`` on top). The bound grows
    /// with the request's size on the measured link (``LinkTimings``).
    public var requestTimeout: Duration = .seconds(30)
    /// The progress rules every uplink starts from; an `[[uplinks]]` block may override them.
    public var timings = LinkTimings()
    /// The first wait before retrying a failed request; later waits grow up to ``retryMax``.
    public var retryMin: Duration = .milliseconds(500)
    /// The longest wait between retries.
    public var retryMax: Duration = .seconds(60)
    /// The most outbox rows sent in one batch.
    public var maxBatchRows = 5_000
    /// `ca`: PEM path of the CA that signed the cloud's certificate (a private CA); nil trusts
    /// the system's roots. Applies to every `https` uplink.
    public var certificateAuthority: String?
    /// `client_cert` and `client_key`: the certificate the gateway presents to a cloud that
    /// asks for one (`tls_client_ca` there).
    public var clientCertificate: CertificateFiles?
    /// `insecure_skip_verify`: accept any certificate from the cloud. Only for a test bench;
    /// never the default, and logged as a warning at start.
    public var insecureSkipVerify = false

    /// A link with every optional key at its default; ``notifyNetworks`` holds
    /// ``GatewayConfig/defaultNetworkClasses``, the classes a file without `[network]` declares.
    public init(url: String, gatewayID: String, secret: String?) {
        self.url = url
        self.gatewayID = gatewayID
        self.secret = secret
        self.notifyNetworks = GatewayConfig.defaultNetworkClasses
    }

    static let keys = [
        "url", "gateway_id", "secret", "compression", "level", "dictionary_bytes", "flush_bytes", "notify_networks",
        "notify_wait", "notify_stream", "request_timeout", "retry_min", "retry_max", "max_batch_rows", "ca", "client_cert",
        "client_key", "insecure_skip_verify",
    ] + LinkTimings.keys

    /// Keys that were once accepted, with what to write instead. Refused with that hint rather
    /// than as unknown keys, so that an old file says how to move on.
    static let removedKeys = [
        "sync_interval": "removed: changes now go by each table's upload.max_delay; see [[uplinks]]"
    ]

    /// Reads `[cloud]` from a gateway file; nil when it is absent. The secret must not be one
    /// of `otherTokens` (the gateway's admin and client tokens); `notify_networks` must name
    /// only `networkClasses`, and defaults to all of them.
    static func read(
        _ root: TOMLSection, otherTokens: Set<String>, networkClasses: [String]
    ) throws(KeyError) -> CloudLink? {
        guard let section = try root.section("cloud") else { return nil }
        for (key, reason) in removedKeys.sorted(by: { $0.key < $1.key }) where section.table[key] != nil {
            throw KeyError(key: section.keyPath(key), reason: reason)
        }
        try section.refuseUnknownKeys(keys)
        let urls = try readURLs(section)
        let gatewayID = try section.requiredString("gateway_id")
        try GatewayCredential.checkID(gatewayID, key: section.keyPath("gateway_id"))
        var tokens = otherTokens
        let clientCertificate = try TLSFiles.pair(section, "client_cert", "client_key")
        let secret = try Secrets.readOptionalDistinct(section, "secret", taken: &tokens)
        guard secret != nil || clientCertificate != nil else {
            throw KeyError(
                key: section.keyPath("secret"), reason: "missing: the secret this gateway proves its id with (or a client_cert)")
        }
        var link = CloudLink(url: urls[0], gatewayID: gatewayID, secret: secret)
        link.standbyURLs = Array(urls.dropFirst())
        link.clientCertificate = clientCertificate

        let compressionText = try section.string("compression", default: link.compression.rawValue)
        guard let compression = Compression(rawValue: compressionText) else {
            throw KeyError(
                key: section.keyPath("compression"),
                reason: "'\(compressionText)': use one of \(Compression.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        link.compression = compression
        link.level = try section.int("level", default: link.level, range: Int.min...Int.max)
        if let levels = compression.levels, !levels.contains(link.level) {
            throw KeyError(
                key: section.keyPath("level"),
                reason: "\(link.level) is out of range \(levels.lowerBound)…\(levels.upperBound) for \(compression.rawValue)"
            )
        }

        link.dictionaryBytes = try section.int("dictionary_bytes", default: link.dictionaryBytes, range: 0...(1 << 20))
        if link.dictionaryBytes > 0, link.dictionaryBytes < 256 {
            throw KeyError(key: section.keyPath("dictionary_bytes"), reason: "use 0 (no dictionaries) or at least 256")
        }
        link.flushBytes = try section.int("flush_bytes", default: link.flushBytes, range: 1_024...1_073_741_824)
        link.notifyNetworks = try TableDeclarations.readNetworks(section, "notify_networks", classes: networkClasses)
        link.notifyWait = try section.duration(
            "notify_wait", default: link.notifyWait, minimum: .seconds(1), maximum: .seconds(600))
        link.notifyStream = try section.bool("notify_stream", default: link.notifyStream)
        link.requestTimeout = try section.duration("request_timeout", default: link.requestTimeout, minimum: .seconds(1))
        link.timings = try LinkTimings.read(section, defaults: link.timings)
        link.retryMin = try section.duration("retry_min", default: link.retryMin, minimum: .milliseconds(1))
        link.retryMax = try section.duration("retry_max", default: link.retryMax, minimum: .milliseconds(1))
        guard link.retryMax >= link.retryMin else {
            throw KeyError(
                key: section.keyPath("retry_max"),
                reason: "must be at least retry_min (\(DurationText.format(link.retryMin)))"
            )
        }
        link.maxBatchRows = try section.int("max_batch_rows", default: link.maxBatchRows, range: 1...1_000_000)
        link.certificateAuthority = try TLSFiles.path(section, "ca")
        link.insecureSkipVerify = try section.bool("insecure_skip_verify", default: false)
        return link
    }

    /// Reads the required `url`: one URL, or an array of the cloud nodes' URLs (at least one,
    /// no two alike), the preferred first; see ``checkURL(_:key:)``.
    static func readURLs(_ section: TOMLSection) throws(KeyError) -> [String] {
        let key = section.keyPath("url")
        if section.table["url"]?.type == .array, let list = try section.stringArray("url") {
            guard !list.isEmpty else {
                throw KeyError(key: key, reason: "an empty list: name at least one cloud node's URL")
            }
            var urls: [String] = []
            for (i, text) in list.enumerated() {
                let url = try checkURL(text, key: "\(key)[\(i)]")
                guard !urls.contains(url) else { throw KeyError(key: "\(key)[\(i)]", reason: "'\(text)' is listed twice") }
                urls.append(url)
            }
            return urls
        }
        let text = try section.requiredString(
            "url", reason: "missing: the cloud's base URL, e.g. http://127.0.0.1:8090, or a list of its nodes' URLs")
        return [try checkURL(text, key: key)]
    }

    /// Checks one URL: http or https with a host, no query or fragment. Trailing slashes are
    /// dropped so that paths can be appended as they are.
    static func checkURL(_ text: String, key: String) throws(KeyError) -> String {
        var url = Substring(text)
        while url.hasSuffix("/") { url = url.dropLast() }
        guard url.hasPrefix("http://") || url.hasPrefix("https://"),
            let parts = URLComponents(string: String(url)), let host = parts.host, !host.isEmpty,
            parts.query == nil, parts.fragment == nil
        else {
            throw KeyError(
                key: key, reason: "'\(text)': expected http://host[:port][/path] or https://…, without ?query or #fragment"
            )
        }
        return String(url)
    }
}
