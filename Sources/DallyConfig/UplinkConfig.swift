import DallyCore

/// One way for a gateway to reach its cloud: a `[[uplinks]]` block of the gateway file.
///
/// Each uplink uses one network class; the scheduler sends a table's changes over an uplink
/// only when the table's policy allows that class. Without any block, a gateway with a
/// `[cloud]` section has one uplink named `default`, of the cheapest class, to `[cloud] url`.
///
/// ```toml
/// [[uplinks]]
/// name = "shop-wifi"
/// class = "wifi"
/// url = "http://10.0.0.5:8090"     # default: [cloud] url
/// proxy = "http://10.0.0.1:3128"   # optional HTTP proxy
/// probe_interval = "30s"           # default 60s; "off" never probes
/// down_probe_interval = "5s"       # while the cloud gives no answer; default 100ms on the
///                                  # cheapest class, else probe_interval
/// eager = true                     # default false
/// idle_timeout = "2m"              # and min_rate, min_rate_window, target_request_time:
///                                  # default [cloud]'s (``LinkTimings``)
/// ```
public struct UplinkConfig: Sendable, Equatable {
    /// An HTTP proxy the uplink's requests go through, written `http://host:port`.
    public struct Proxy: Sendable, Equatable {
        /// The proxy's host name or address; an IPv6 address without its brackets.
        public var host: String
        /// The proxy's TCP port, 1 to 65535.
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// The uplink's name, unique among the gateway's uplinks (ignoring case): 1 to 63 letters,
    /// digits, `_` or `-`.
    public var name: String
    /// The network class this uplink uses: one of the gateway's `[network] classes`.
    public var networkClass: String
    /// The cloud's base URL over this uplink, without a trailing slash: the first node when
    /// `url` lists several (an uplink without `url` takes `[cloud]`'s nodes).
    public var url: String
    /// The other cloud nodes, tried in order while the one in use does not answer.
    public var standbyURLs: [String] = []

    /// Every node, the preferred first.
    public var nodeURLs: [String] { [url] + standbyURLs }
    /// The HTTP proxy to go through; nil to connect directly.
    public var proxy: Proxy?
    /// How often to check that the cloud is reachable over this uplink; nil never to probe.
    public var probeInterval: Duration?
    /// How often to check while the cloud gives no answer over this uplink (its last probe
    /// failed, or its last request got none): how soon a gateway finds its cloud back after an
    /// outage. Never longer than ``probeInterval``, which it follows when nil.
    public var downProbeInterval: Duration?
    /// Whether to send as soon as changes exist while this uplink is available, rather than
    /// waiting for the tables' deadlines.
    public var eager: Bool
    /// When a transfer over this uplink counts as failed, and how large one request is.
    public var timings = LinkTimings()

    /// The name of the uplink a gateway uses when its file declares none.
    public static let defaultName = "default"
    /// How often an uplink is probed when its block does not say.
    public static let defaultProbeInterval: Duration = .seconds(60)
    /// How often an uplink of the cheapest class is probed while the cloud does not answer,
    /// when its block does not say. On a LAN a failed probe is a refused connection, which
    /// costs little; a metered class keeps its `probe_interval`, because each probe there
    /// is paid for. A tenth of a second, the shortest a block may set: the wait for the first
    /// batch after an outage is half of it on average (a quarter second's left a 100,000-row
    /// drain waiting 80 ms more on average, 3 % of it), for a knock that costs the gateway
    /// ~0.7 ms of CPU (8 ms a second while the cloud is down, against 4 at a quarter second;
    /// docs/BENCHMARKS.md).
    public static let defaultCheapestDownProbeInterval: Duration = shortestDownProbeInterval
    /// The shortest `down_probe_interval` a block may set.
    public static let shortestDownProbeInterval: Duration = .milliseconds(100)

    public init(
        name: String, networkClass: String, url: String, proxy: Proxy? = nil,
        probeInterval: Duration? = UplinkConfig.defaultProbeInterval, downProbeInterval: Duration? = nil,
        eager: Bool = false
    ) {
        self.name = name
        self.networkClass = networkClass
        self.url = url
        self.proxy = proxy
        self.probeInterval = probeInterval
        self.downProbeInterval = downProbeInterval
        self.eager = eager
    }

    /// The uplink of a gateway whose file declares none: `default`, of the cheapest class.
    ///
    /// ```swift
    /// let uplink = UplinkConfig.implicit(cheapestClass: "wired", url: "http://cloud.internal:8090")
    /// ```
    public static func implicit(cheapestClass: String, url: String) -> UplinkConfig {
        UplinkConfig(
            name: defaultName, networkClass: cheapestClass, url: url, downProbeInterval: defaultCheapestDownProbeInterval)
    }

    static let keys = ["name", "class", "url", "proxy", "probe_interval", "down_probe_interval", "eager"]
        + LinkTimings.keys

    /// Reads `[[uplinks]]` from a gateway file.
    ///
    /// The uplinks share `[cloud]`'s gateway id and secret, so blocks without that section are
    /// refused. With `[cloud]` and no blocks the result is the one implicit `default` uplink, of
    /// the cheapest class (the first of `networkClasses`); without `[cloud]` it is empty.
    static func read(
        _ root: TOMLSection, cloud: CloudLink?, networkClasses: [String]
    ) throws(KeyError) -> [UplinkConfig] {
        let sections = try root.sections("uplinks")
        guard let cloud else {
            guard sections.isEmpty else {
                throw KeyError(
                    key: "uplinks", reason: "uplinks need a [cloud] section: it holds the gateway id, secret and default url")
            }
            return []
        }
        guard !sections.isEmpty else {
            // readNetworkClasses refuses an empty list, so there is always a cheapest class.
            guard let cheapest = networkClasses.first else { return [] }
            var uplink = implicit(cheapestClass: cheapest, url: cloud.url)
            uplink.timings = cloud.timings
            uplink.standbyURLs = cloud.standbyURLs
            return [uplink]
        }
        var uplinks: [UplinkConfig] = []
        var names: Set<String> = []
        for section in sections {
            let uplink = try readUplink(section, cloud: cloud, networkClasses: networkClasses)
            guard names.insert(uplink.name.lowercased()).inserted else {
                throw KeyError(key: section.keyPath("name"), reason: "duplicate uplink '\(uplink.name)'")
            }
            uplinks.append(uplink)
        }
        return uplinks
    }

    static func readUplink(
        _ section: TOMLSection, cloud: CloudLink, networkClasses: [String]
    ) throws(KeyError) -> UplinkConfig {
        try section.refuseUnknownKeys(keys)
        let name = try section.requiredString("name", reason: "missing: every uplink needs a name")
        // The same alphabet as gateway ids: names such as "shop-wifi" read well in logs and
        // metrics labels, which table-style names (no dash) would not allow.
        guard GatewayCredential.isValidID(name) else {
            throw KeyError(
                key: section.keyPath("name"),
                reason: "bad uplink name '\(name)': use 1 to \(GatewayCredential.maxIDLength) letters, digits, _ or -"
            )
        }
        let declared = networkClasses.joined(separator: ", ")
        let networkClass = try section.requiredString(
            "class", reason: "missing: the network class this uplink uses, one of \(declared)")
        guard networkClasses.contains(networkClass) else {
            throw KeyError(
                key: section.keyPath("class"),
                reason: "unknown network class '\(networkClass)'; declared classes: \(declared)"
            )
        }
        let urls = section.table["url"] == nil ? cloud.nodeURLs : try CloudLink.readURLs(section)
        var uplink = UplinkConfig(name: name, networkClass: networkClass, url: urls[0])
        uplink.standbyURLs = Array(urls.dropFirst())
        uplink.proxy = try readProxy(section)
        uplink.probeInterval = try readProbeInterval(section)
        uplink.downProbeInterval = try readDownProbeInterval(
            section, probeInterval: uplink.probeInterval, cheapest: networkClass == networkClasses.first)
        uplink.eager = try section.bool("eager", default: false)
        uplink.timings = try LinkTimings.read(section, defaults: cloud.timings)
        return uplink
    }

    /// Reads the optional `proxy`, `http://host:port` with nothing else: no user, path or query.
    /// HTTPS proxies are refused because the client connects to the proxy in plain HTTP.
    static func readProxy(_ section: TOMLSection) throws(KeyError) -> Proxy? {
        guard let text = try section.string("proxy") else { return nil }
        let key = section.keyPath("proxy")
        let malformed = KeyError(key: key, reason: "'\(text)': expected an HTTP proxy as http://host:port")
        guard text.hasPrefix("http://") else { throw malformed }
        var rest = text.dropFirst("http://".count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }

        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            // An IPv6 address: [hex:hex…]:port.
            guard let close = rest.firstIndex(of: "]") else { throw malformed }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let afterHost = rest[rest.index(after: close)...]
            guard afterHost.hasPrefix(":"), !host.isEmpty,
                host.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") })
            else { throw malformed }
            portText = afterHost.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else { throw malformed }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
            guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
            else { throw malformed }
        }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = Int(portText)
        else { throw malformed }
        guard (1...65535).contains(port) else {
            throw KeyError(key: key, reason: "'\(text)': port \(port) is out of range 1…65535")
        }
        return Proxy(host: String(host), port: port)
    }

    /// Reads the optional `probe_interval`: a duration of at least 1s, or `"off"` (nil).
    static func readProbeInterval(_ section: TOMLSection) throws(KeyError) -> Duration? {
        guard let text = try section.string("probe_interval") else { return defaultProbeInterval }
        guard text != "off" else { return nil }
        let key = section.keyPath("probe_interval")
        guard let interval = DurationText.parse(text) else {
            throw KeyError(
                key: key, reason: "bad duration \"\(text)\": expected \(DurationText.expected), or \"off\" never to probe")
        }
        // Probing faster than once a second would load a metered link for no better answer.
        guard interval >= .seconds(1) else {
            throw KeyError(key: key, reason: "must be at least 1s, or \"off\" never to probe")
        }
        return interval
    }

    /// Reads the optional `down_probe_interval`: a duration from 100ms to `probe_interval`. Left
    /// out, it is ``defaultCheapestDownProbeInterval`` (or `probe_interval` when shorter) on the
    /// cheapest class, and nil (`probe_interval`) on any other.
    static func readDownProbeInterval(
        _ section: TOMLSection, probeInterval: Duration?, cheapest: Bool
    ) throws(KeyError) -> Duration? {
        guard let text = try section.string("down_probe_interval") else {
            return cheapest ? probeInterval.map { min($0, defaultCheapestDownProbeInterval) } : nil
        }
        let key = section.keyPath("down_probe_interval")
        guard let probeInterval else {
            throw KeyError(key: key, reason: "needs probe_interval: an uplink that never probes has nothing to probe faster")
        }
        guard let interval = DurationText.parse(text) else {
            throw KeyError(key: key, reason: "bad duration \"\(text)\": expected \(DurationText.expected)")
        }
        guard interval >= shortestDownProbeInterval, interval <= probeInterval else {
            throw KeyError(
                key: key,
                reason: "must be from \(DurationText.format(shortestDownProbeInterval)) to probe_interval (\(DurationText.format(probeInterval)))")
        }
        return interval
    }
}
