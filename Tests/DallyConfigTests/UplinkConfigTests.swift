import DallyCore
import Testing

@testable import DallyConfig

// The gateway's [[uplinks]], and the tables no uplink can carry.

// MARK: - Helpers

private let adminToken = "admin-token-0123456789"
private let secret = "gateway-secret-0123456789"
private let cloudURL = "http://127.0.0.1:8090"
private let defaultClasses = "wired, wifi, cellular, satellite"

private let admin = """
    [admin]
    token = "\(adminToken)"

    """

private let cloud = """
    [cloud]
    url = "\(cloudURL)"
    gateway_id = "gateway-a"
    secret = "\(secret)"

    """

/// A gateway file with [cloud], then `rest` (uplink blocks, tables, [network]…).
private func withCloud(_ rest: String = "") -> String { admin + cloud + rest }

/// One `[[uplinks]]` block named `name` of class `networkClass`, followed by `extra` lines.
private func uplink(_ extra: String = "", name: String = "shop-wifi", class networkClass: String = "wifi") -> String {
    """
    [[uplinks]]
    name = "\(name)"
    class = "\(networkClass)"
    \(extra)

    """
}

private func parse(_ text: String) throws -> GatewayConfig {
    try GatewayConfig.parse(text: text, file: testFileName)
}

private func uplinks(_ text: String) throws -> [UplinkConfig] {
    try parse(text).uplinks
}

/// Asserts that `text` is refused for `key` with a reason containing `reason`.
@discardableResult
private func expectRefusal(
    _ text: String, key: String?, reason: String, sourceLocation: SourceLocation = #_sourceLocation
) -> ConfigError? {
    expectRefusal(text, key: key, reason: reason, parse: GatewayConfig.parse(text:file:), sourceLocation: sourceLocation)
}

// MARK: - Valid blocks

@Suite("GatewayConfig [[uplinks]]: valid blocks")
struct UplinkValidTests {
    @Test func standaloneHasNoUplinks() throws {
        let config = try parse(admin)
        #expect(config.cloud == nil)
        #expect(config.uplinks.isEmpty)
    }

    @Test func cloudWithoutBlocksHasTheImplicitDefault() throws {
        let only = try #require(try uplinks(withCloud()).first)
        #expect(try uplinks(withCloud()).count == 1)
        #expect(only.name == "default")
        #expect(only.networkClass == "wired")
        #expect(only.url == cloudURL)
        #expect(only.proxy == nil)
        #expect(only.probeInterval == .seconds(60))
        #expect(only.downProbeInterval == .milliseconds(100))
        #expect(only.eager == false)
        #expect(
            only
                == UplinkConfig(
                    name: UplinkConfig.defaultName, networkClass: "wired", url: cloudURL, downProbeInterval: .milliseconds(100)))
    }

    @Test func implicitDefaultTakesTheCheapestDeclaredClassAndTheCloudURL() throws {
        let text = withCloud("[network]\nclasses = [\"lte\", \"sat\"]\n")
            .replacingOccurrences(of: cloudURL, with: "https://cloud.example.com/dally/")
        #expect(
            try uplinks(text) == [
                UplinkConfig(
                    name: "default", networkClass: "lte", url: "https://cloud.example.com/dally",
                    downProbeInterval: .milliseconds(100))
            ])
    }

    @Test func blockDefaults() throws {
        #expect(try uplinks(withCloud(uplink())) == [UplinkConfig(name: "shop-wifi", networkClass: "wifi", url: cloudURL)])
    }

    @Test func everyKey() throws {
        let text = withCloud(
            uplink(
                """
                url = "https://lte.example.com/dally/"
                proxy = "http://10.0.0.1:3128"
                probe_interval = "1h30m"
                down_probe_interval = "5m"
                eager = true
                """, name: "lte_1", class: "cellular"))
        let expected = UplinkConfig(
            name: "lte_1", networkClass: "cellular", url: "https://lte.example.com/dally",
            proxy: UplinkConfig.Proxy(host: "10.0.0.1", port: 3128), probeInterval: .seconds(5_400),
            downProbeInterval: .seconds(300), eager: true)
        #expect(try uplinks(text) == [expected])
    }

    @Test func blocksKeepTheirOrderAndReplaceTheDefault() throws {
        let text = withCloud(
            uplink(name: "lte", class: "cellular") + uplink(name: "shop-wifi", class: "wifi")
                + uplink(name: "wire", class: "wired"))
        let read = try uplinks(text)
        #expect(read.map(\.name) == ["lte", "shop-wifi", "wire"])
        #expect(read.map(\.networkClass) == ["cellular", "wifi", "wired"])
        #expect(!read.contains { $0.name == "default" })
    }

    @Test func probeIntervalOffMeansNeverProbe() throws {
        let read = try #require(try uplinks(withCloud(uplink(#"probe_interval = "off""#))).first)
        #expect(read.probeInterval == nil)
    }

    /// The cheapest class looks for a silent cloud every tenth of a second (never less often than
    /// its `probe_interval`); a dearer class keeps its `probe_interval` unless told.
    @Test func downProbeIntervalDefaultsByClass() throws {
        let read = try uplinks(
            withCloud(
                uplink(name: "wire", class: "wired") + uplink(#"probe_interval = "1s""#, name: "wire2", class: "wired")
                    + uplink(name: "lte", class: "cellular") + uplink(#"probe_interval = "off""#, name: "wire3", class: "wired")))
        #expect(read.map(\.downProbeInterval) == [.milliseconds(100), .milliseconds(100), nil, nil])
    }

    @Test func downProbeIntervalLimits() throws {
        expectRefusal(
            withCloud(uplink(#"down_probe_interval = "2m""#)), key: "uplinks[0].down_probe_interval",
            reason: "must be from 100ms to probe_interval (1m)")
        expectRefusal(
            withCloud(uplink(#"down_probe_interval = "50ms""#)), key: "uplinks[0].down_probe_interval",
            reason: "must be from 100ms to probe_interval")
        #expect(try uplinks(withCloud(uplink(#"down_probe_interval = "100ms""#))).first?.downProbeInterval == .milliseconds(100))
        expectRefusal(
            withCloud(uplink(#"down_probe_interval = "soon""#)), key: "uplinks[0].down_probe_interval",
            reason: "bad duration \"soon\"")
        expectRefusal(
            withCloud(uplink("probe_interval = \"off\"\ndown_probe_interval = \"2s\"")),
            key: "uplinks[0].down_probe_interval", reason: "needs probe_interval")
    }

    /// `keep_alive` defaults to 60 s, `[cloud]`'s value is every uplink's default (the implicit
    /// one's included), and a block's own wins; 1 s to 1 h.
    @Test func keepAliveDefaultsInheritsAndLimits() throws {
        #expect(try uplinks(withCloud(uplink())).first?.timings.keepAlive == .seconds(60))
        let cloudTen = admin + cloud.replacingOccurrences(of: "[cloud]\n", with: "[cloud]\nkeep_alive = \"10m\"\n")
        #expect(try uplinks(cloudTen).first?.timings.keepAlive == .seconds(600))
        let read = try uplinks(cloudTen + uplink(name: "wire", class: "wired") + uplink(#"keep_alive = "1h""#, name: "sat", class: "satellite"))
        #expect(read.map(\.timings.keepAlive) == [.seconds(600), .seconds(3_600)])
        expectRefusal(withCloud(uplink(#"keep_alive = "500ms""#)), key: "uplinks[0].keep_alive", reason: "must be at least 1s")
        expectRefusal(withCloud(uplink(#"keep_alive = "2h""#)), key: "uplinks[0].keep_alive", reason: "must be at most 1h")
        expectRefusal(withCloud(uplink(#"keep_alive = "often""#)), key: "uplinks[0].keep_alive", reason: "bad duration \"often\"")
    }

    @Test func probeIntervalOfOneSecondIsTheShortest() throws {
        #expect(try uplinks(withCloud(uplink(#"probe_interval = "1s""#))).first?.probeInterval == .seconds(1))
        #expect(try uplinks(withCloud(uplink(#"probe_interval = "10m""#))).first?.probeInterval == .seconds(600))
    }

    @Test(arguments: [
        ("http://10.0.0.1:3128", "10.0.0.1", 3128),
        ("http://proxy.example.com:8080/", "proxy.example.com", 8080),
        ("http://Proxy-1:1", "Proxy-1", 1),
        ("http://proxy:65535", "proxy", 65535),
        ("http://[::1]:3128", "::1", 3128),
        ("http://[fd00::a:1]:80", "fd00::a:1", 80),
    ])
    func proxy(_ written: String, _ host: String, _ port: Int) throws {
        let read = try #require(try uplinks(withCloud(uplink("proxy = \"\(written)\""))).first)
        #expect(read.proxy == UplinkConfig.Proxy(host: host, port: port))
    }

    @Test func nameMayUseDashUnderscoreDigitsAndCase() throws {
        let longest = String(repeating: "u", count: 63)
        for name in ["Shop_7-north", "7", "-", longest] {
            #expect(try uplinks(withCloud(uplink(name: name))).first?.name == name)
        }
    }

    @Test func classMayBeAnyDeclaredClass() throws {
        let text = withCloud("[network]\nclasses = [\"ethernet\", \"lte\"]\n" + uplink(name: "radio", class: "lte"))
        #expect(try uplinks(text).first?.networkClass == "lte")
    }

    @Test func shippedGatewayFileDeclaresTwoUplinks() throws {
        let config = try GatewayConfig.load(path: shippedConfig("gateway.toml"))
        let url = try #require(config.cloud?.url)
        #expect(
            config.uplinks == [
                UplinkConfig(
                    name: "shop-wifi", networkClass: "wifi", url: url, probeInterval: .seconds(30),
                    downProbeInterval: .seconds(5), eager: true),
                UplinkConfig(name: "lte", networkClass: "cellular", url: url, probeInterval: .seconds(600)),
            ]
        )
        #expect(config.tablesWithoutUplink().isEmpty)
    }
}

// MARK: - Refusals

@Suite("GatewayConfig [[uplinks]]: refusals")
struct UplinkRefusalTests {
    @Test func uplinksNeedACloudSection() throws {
        let text = admin + uplink()
        let error = try #require(
            expectRefusal(
                text, key: "uplinks",
                reason: "uplinks need a [cloud] section: it holds the gateway id, secret and default url"))
        #expect(error.line == line(containing: "[[uplinks]]", in: text))
    }

    @Test func missingName() throws {
        let text = withCloud("[[uplinks]]\nclass = \"wifi\"\n")
        let error = try #require(expectRefusal(text, key: "uplinks[0].name", reason: "missing: every uplink needs a name"))
        #expect(error.line == nil)
    }

    @Test(arguments: ["", "shop wifi", "wifi.1", "wifi/1", "café", String(repeating: "u", count: 64)])
    func badName(_ name: String) throws {
        let error = try #require(
            expectRefusal(withCloud(uplink(name: name)), key: "uplinks[0].name", reason: "bad uplink name '\(name)'"))
        #expect(error.reason.hasSuffix("use 1 to 63 letters, digits, _ or -"))
    }

    @Test func duplicateNamesIgnoringCase() {
        expectRefusal(
            withCloud(
                uplink(name: "lte", class: "cellular") + uplink(name: "Shop-WiFi") + uplink(name: "shop-wifi", class: "wired")),
            key: "uplinks[2].name", reason: "duplicate uplink 'shop-wifi'")
        expectRefusal(
            withCloud(uplink(name: "lte", class: "cellular") + uplink(name: "lte", class: "cellular")),
            key: "uplinks[1].name", reason: "duplicate uplink 'lte'")
    }

    @Test func missingClass() throws {
        let text = withCloud("[[uplinks]]\nname = \"lte\"\n")
        let error = try #require(expectRefusal(text, key: "uplinks[0].class", reason: "missing"))
        #expect(error.reason == "missing: the network class this uplink uses, one of \(defaultClasses)")
    }

    @Test func unknownClass() throws {
        let text = withCloud(uplink(name: "radio", class: "lora"))
        let error = try #require(
            expectRefusal(
                text, key: "uplinks[0].class", reason: "unknown network class 'lora'; declared classes: \(defaultClasses)"))
        #expect(error.line == line(containing: "class = \"lora\"", in: text))
        // A declared [network] replaces the default classes.
        expectRefusal(
            withCloud("[network]\nclasses = [\"ethernet\", \"lte\"]\n" + uplink()),
            key: "uplinks[0].class", reason: "unknown network class 'wifi'; declared classes: ethernet, lte")
        // Class names match exactly.
        expectRefusal(withCloud(uplink(class: "WiFi")), key: "uplinks[0].class", reason: "unknown network class 'WiFi'")
    }

    @Test(arguments: ["127.0.0.1:8090", "ftp://example.com", "http://", "http://example.com?x=1", ""])
    func badURLIsCheckedLikeTheCloudURL(_ url: String) {
        expectRefusal(withCloud(uplink("url = \"\(url)\"")), key: "uplinks[0].url", reason: "'\(url)': expected http://")
    }

    @Test(arguments: [
        "10.0.0.1:3128", "https://10.0.0.1:3128", "socks5://10.0.0.1:1080", "http://10.0.0.1", "http://10.0.0.1:",
        "http://:3128", "http://user:pw@proxy:3128", "http://proxy:3128/path", "http://proxy:3128?x=1",
        "http://proxy:port", "http://proxy:-1", "http://proxy:+80", "http://proxy:123456", "http://[::1]",
        "http://[::1:3128", "http://[zz::1]:3128", "http://pro xy:3128", "HTTP://proxy:3128", "",
    ])
    func malformedProxy(_ proxy: String) throws {
        let text = withCloud(uplink("proxy = \"\(proxy)\""))
        let error = try #require(expectRefusal(text, key: "uplinks[0].proxy", reason: "'\(proxy)'"))
        #expect(error.reason.hasSuffix("expected an HTTP proxy as http://host:port"))
        #expect(error.line == line(containing: "proxy =", in: text))
    }

    @Test(arguments: [0, 65536, 99999])
    func proxyPortOutOfRange(_ port: Int) {
        expectRefusal(
            withCloud(uplink("proxy = \"http://proxy:\(port)\"")), key: "uplinks[0].proxy",
            reason: "'http://proxy:\(port)': port \(port) is out of range 1…65535")
    }

    @Test func probeIntervalLimits() throws {
        expectRefusal(
            withCloud(uplink(#"probe_interval = "999ms""#)), key: "uplinks[0].probe_interval",
            reason: "must be at least 1s, or \"off\" never to probe")
        expectRefusal(withCloud(uplink(#"probe_interval = "0s""#)), key: "uplinks[0].probe_interval", reason: "at least 1s")
        for bad in ["never", "Off", "60"] {
            let error = try #require(
                expectRefusal(
                    withCloud(uplink("probe_interval = \"\(bad)\"")), key: "uplinks[0].probe_interval",
                    reason: "bad duration \"\(bad)\""))
            #expect(error.reason.hasSuffix("or \"off\" never to probe"))
        }
    }

    @Test func wrongTypes() {
        // Root keys come before the first table header.
        expectRefusal("uplinks = \"wifi\"\n" + withCloud(), key: "uplinks", reason: "wrong type")
        expectRefusal("uplinks = [\"wifi\"]\n" + withCloud(), key: "uplinks[0]", reason: "wrong type")
        expectRefusal(
            withCloud(uplink().replacingOccurrences(of: "\"shop-wifi\"", with: "7")), key: "uplinks[0].name",
            reason: "wrong type")
        expectRefusal(withCloud(uplink("url = 8090")), key: "uplinks[0].url", reason: "wrong type")
        expectRefusal(withCloud(uplink("proxy = 3128")), key: "uplinks[0].proxy", reason: "wrong type")
        expectRefusal(withCloud(uplink("probe_interval = 60")), key: "uplinks[0].probe_interval", reason: "wrong type")
        expectRefusal(withCloud(uplink("probe_interval = false")), key: "uplinks[0].probe_interval", reason: "wrong type")
        expectRefusal(withCloud(uplink(#"eager = "yes""#)), key: "uplinks[0].eager", reason: "wrong type")
    }

    @Test func unknownKey() throws {
        let text = withCloud(uplink(#"network = "cellular""#, name: "lte", class: "cellular"))
        let error = try #require(expectRefusal(text, key: "uplinks[0].network", reason: "unknown key"))
        #expect(error.reason.hasSuffix("known keys here: name, class, url, proxy, probe_interval, down_probe_interval, eager, idle_timeout, min_rate, min_rate_window, target_request_time, keep_alive"))
        // Keys of [cloud] do not belong in an uplink.
        expectRefusal(
            withCloud(uplink(#"secret = "gateway-secret-0123456789""#)), key: "uplinks[0].secret", reason: "unknown key")
    }
}

// MARK: - Tables no uplink can carry

@Suite("GatewayConfig.tablesWithoutUplink")
struct TablesWithoutUplinkTests {
    static let tables = """
        [[tables]]
        name = "orders"
        columns = ["total REAL"]
        upload = { networks = ["wired", "wifi"] }

        [[tables]]
        name = "telemetry"
        columns = ["battery INTEGER"]
        upload = { networks = ["satellite"] }

        [[tables]]
        name = "notes"
        columns = ["text TEXT"]
        local_only = true
        upload = { networks = ["satellite"] }

        [[tables]]
        name = "photos"
        columns = ["image OBJECT"]
        upload = { networks = ["wired"] }
        upload_objects = { networks = ["wifi"] }

        [[tables]]
        name = "muted"
        columns = ["x TEXT"]
        upload = { networks = [] }

        [[tables]]
        name = "everywhere"
        columns = ["x TEXT"]

        """

    @Test func tablesWhoseRowNetworksHaveNoUplinkClass() throws {
        let config = try parse(
            withCloud(Self.tables + uplink(name: "shop-wifi", class: "wifi") + uplink(name: "lte", class: "cellular")))
        // notes is local-only; photos' objects could go over wifi, but its rows could not.
        #expect(config.tablesWithoutUplink() == ["telemetry", "photos", "muted"])
    }

    @Test func theImplicitUplinkCountsWithTheCheapestClass() throws {
        let config = try parse(withCloud(Self.tables))
        #expect(config.uplinks.map(\.networkClass) == ["wired"])
        #expect(config.tablesWithoutUplink() == ["telemetry", "muted"])
    }

    @Test func everyTableReachableGivesNone() throws {
        let config = try parse(
            withCloud(
                Self.tables.replacingOccurrences(of: "networks = []", with: "networks = [\"satellite\"]")
                    + uplink(name: "sat", class: "satellite") + uplink(name: "wire", class: "wired")))
        #expect(config.tablesWithoutUplink().isEmpty)
    }

    @Test func standaloneGatewaysWarnAboutNothing() throws {
        let config = try parse(admin + Self.tables)
        #expect(config.tablesWithoutUplink().isEmpty)
    }

    @Test func builtInCode() {
        let link = CloudLink(url: cloudURL, gatewayID: "gateway-a", secret: secret)
        let policy = SyncPolicy(
            localOnly: false, atomicSync: false,
            uploadRows: UploadPolicy(maxDelay: .seconds(60), networks: ["cellular"]),
            uploadObjects: UploadPolicy(maxDelay: .seconds(600), networks: ["cellular"]),
            downloadRows: DownloadPolicy(period: .seconds(60), networks: ["cellular"]),
            downloadObjects: DownloadPolicy(period: .seconds(600), networks: ["cellular"]))
        let table = TableSchema(name: "t", columns: [], conflict: .lastWriterWins, policy: policy)
        var config = GatewayConfig(adminToken: adminToken, clients: [], tables: [table], cloud: link)
        // The initializer's default is no uplinks, so nothing can carry the table.
        #expect(config.uplinks.isEmpty)
        #expect(config.tablesWithoutUplink() == ["t"])
        config.uplinks = [UplinkConfig(name: "lte", networkClass: "cellular", url: cloudURL)]
        #expect(config.tablesWithoutUplink().isEmpty)
        config.cloud = nil
        config.uplinks = []
        #expect(config.tablesWithoutUplink().isEmpty)
    }
}
