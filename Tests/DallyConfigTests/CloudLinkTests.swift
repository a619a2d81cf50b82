import DallyCore
import Testing

@testable import DallyConfig

// The gateway's [cloud] section.

// MARK: - Helpers

private let adminToken = "admin-token-0123456789"
private let clientToken = "client-token-0123456789"
private let secret = "gateway-secret-0123456789"

/// A valid gateway configuration without [cloud].
private let standalone = """
    [admin]
    token = "\(adminToken)"

    [[clients]]
    name = "pos"
    token = "\(clientToken)"

    """

/// `standalone` with the smallest valid [cloud] section, followed by `extra` lines in it.
private func withCloud(_ extra: String = "") -> String {
    standalone + """
        [cloud]
        url = "http://127.0.0.1:8090"
        gateway_id = "gateway-a"
        secret = "\(secret)"
        \(extra)
        """
}

private func link(_ text: String) throws -> CloudLink? {
    try GatewayConfig.parse(text: text, file: testFileName).cloud
}

/// Asserts that `text` is refused for `key` with a reason containing `reason`.
@discardableResult
private func expectRefusal(
    _ text: String, key: String?, reason: String, sourceLocation: SourceLocation = #_sourceLocation
) -> ConfigError? {
    expectRefusal(text, key: key, reason: reason, parse: GatewayConfig.parse(text:file:), sourceLocation: sourceLocation)
}

// MARK: - Valid sections

@Suite("GatewayConfig [cloud]: valid sections")
struct CloudLinkValidTests {
    @Test func absentMeansStandalone() throws {
        #expect(try link(standalone) == nil)
    }

    @Test func defaults() throws {
        let cloud = try #require(try link(withCloud()))
        #expect(cloud.url == "http://127.0.0.1:8090")
        #expect(cloud.gatewayID == "gateway-a")
        #expect(cloud.secret == secret)
        #expect(cloud.compression == CloudLink.Compression.zstd)
        #expect(cloud.level == 6)
        #expect(cloud.dictionaryBytes == 4_096)
        #expect(cloud.flushBytes == 1_048_576)
        #expect(cloud.notifyNetworks == ["wired", "wifi", "cellular", "satellite"])
        #expect(cloud.notifyWait == .seconds(60))
        #expect(cloud.requestTimeout == .seconds(30))
        #expect(cloud.retryMin == .milliseconds(500))
        #expect(cloud.retryMax == .seconds(60))
        #expect(cloud.maxBatchRows == 5_000)
        #expect(cloud == CloudLink(url: "http://127.0.0.1:8090", gatewayID: "gateway-a", secret: secret))
    }

    @Test func everyKey() throws {
        let cloud = try #require(
            try link(
                withCloud("""
                    compression = "deflate"
                    level = 9
                    flush_bytes = 1024
                    notify_networks = ["satellite", "wifi"]
                    notify_wait = "10m"
                    request_timeout = "1s"
                    retry_min = "2s"
                    retry_max = "2s"
                    max_batch_rows = 1000000
                    """)))
        #expect(cloud.compression == CloudLink.Compression.deflate)
        #expect(cloud.level == 9)
        #expect(cloud.flushBytes == 1_024)
        #expect(cloud.notifyNetworks == ["satellite", "wifi"])
        #expect(cloud.notifyWait == .seconds(600))
        #expect(cloud.requestTimeout == .seconds(1))
        #expect(cloud.retryMin == .seconds(2))
        #expect(cloud.retryMax == .seconds(2))
        #expect(cloud.maxBatchRows == 1_000_000)
    }

    @Test(arguments: [
        ("https://cloud.example.com/", "https://cloud.example.com"),
        ("http://10.0.0.1:8090///", "http://10.0.0.1:8090"),
        ("https://example.com/dally/v1/", "https://example.com/dally/v1"),
        ("http://[::1]:8090", "http://[::1]:8090"),
    ])
    func urlLosesTrailingSlashes(_ written: String, _ stored: String) throws {
        let text = withCloud().replacingOccurrences(of: "http://127.0.0.1:8090", with: written)
        #expect(try link(text)?.url == stored)
    }

    @Test func levelLimitsFollowTheCompression() throws {
        #expect(try link(withCloud("level = 1"))?.level == 1)
        #expect(try link(withCloud("level = 19"))?.level == 19)
        #expect(try link(withCloud("compression = \"deflate\"\nlevel = 1"))?.level == 1)
        // The default level suits deflate too.
        #expect(try link(withCloud("compression = \"deflate\""))?.level == 6)
        // No compression, no level check.
        #expect(try link(withCloud("compression = \"none\"\nlevel = 50"))?.compression == CloudLink.Compression.none)
        #expect(CloudLink.Compression.none.levels == nil)
    }

    @Test func gatewayIDMayUseDashAndUnderscore() throws {
        let text = withCloud().replacingOccurrences(of: "\"gateway-a\"", with: "\"Shop_7-north\"")
        #expect(try link(text)?.gatewayID == "Shop_7-north")
    }

    @Test func flushBytesLimitsAreInclusive() throws {
        #expect(try link(withCloud("flush_bytes = 1024"))?.flushBytes == 1_024)
        #expect(try link(withCloud("flush_bytes = 1073741824"))?.flushBytes == 1_073_741_824)
    }

    @Test func notifyNetworksDefaultToTheDeclaredClasses() throws {
        let text = "[network]\nclasses = [\"ethernet\", \"lte\"]\n" + withCloud()
        #expect(try link(text)?.notifyNetworks == ["ethernet", "lte"])
    }

    @Test func notifyNetworksKeepTheirOrder() throws {
        let text =
            "[network]\nclasses = [\"ethernet\", \"lte\", \"sat\"]\n" + withCloud("notify_networks = [\"sat\", \"ethernet\"]")
        #expect(try link(text)?.notifyNetworks == ["sat", "ethernet"])
    }

    @Test func emptyNotifyNetworksMeanNeverHoldTheLongPoll() throws {
        let cloud = try #require(try link(withCloud("notify_networks = []")))
        #expect(cloud.notifyNetworks.isEmpty)
    }
}

// MARK: - Refusals

@Suite("GatewayConfig [cloud]: refusals")
struct CloudLinkRefusalTests {
    @Test func requiredKeys() {
        let section = withCloud()
        for (key, line) in [("url", "url = "), ("gateway_id", "gateway_id = "), ("secret", "secret = ")] {
            let text = section.split(separator: "\n").filter { !$0.hasPrefix(line) }.joined(separator: "\n")
            expectRefusal(text, key: "cloud.\(key)", reason: "missing")
        }
    }

    @Test(arguments: [
        "127.0.0.1:8090", "ftp://example.com", "HTTP://example.com", "http://", "http:///path", "https://",
        "http://example.com?x=1", "http://example.com/#top", "http://exa mple.com", "",
    ])
    func badURL(_ url: String) throws {
        let text = withCloud().replacingOccurrences(of: "http://127.0.0.1:8090", with: url)
        let error = try #require(expectRefusal(text, key: "cloud.url", reason: "expected http://"))
        #expect(error.line == line(containing: "url =", in: text))
    }

    @Test(arguments: ["", "gateway a", "gw.a", String(repeating: "g", count: 64)])
    func badGatewayID(_ id: String) {
        let text = withCloud().replacingOccurrences(of: "\"gateway-a\"", with: "\"\(id)\"")
        expectRefusal(text, key: "cloud.gateway_id", reason: "bad gateway id")
    }

    @Test func secretTooShortOrReused() throws {
        let short = try #require(
            expectRefusal(
                withCloud().replacingOccurrences(of: secret, with: "tiny"), key: "cloud.secret", reason: "at least 16"))
        #expect(short.line == line(containing: "secret =", in: withCloud()))
        // A local client or the admin holding the cloud secret could speak for the gateway.
        for token in [adminToken, clientToken] {
            expectRefusal(
                withCloud().replacingOccurrences(of: secret, with: token), key: "cloud.secret", reason: "duplicate secret")
        }
    }

    @Test func unknownCompression() throws {
        let error = try #require(
            expectRefusal(withCloud("compression = \"gzip\""), key: "cloud.compression", reason: "'gzip'"))
        #expect(error.reason.contains("zstd, deflate, none"))
    }

    @Test(arguments: [("zstd", 0), ("zstd", 20), ("deflate", 0), ("deflate", 10), ("zstd", -3)])
    func levelOutOfRangeForTheCompression(_ compression: String, _ level: Int) throws {
        let text = withCloud("compression = \"\(compression)\"\nlevel = \(level)")
        let error = try #require(expectRefusal(text, key: "cloud.level", reason: "out of range"))
        #expect(error.reason.hasSuffix("for \(compression)"))
        #expect(error.reason.contains(compression == "zstd" ? "1…19" : "1…9"))
        #expect(error.line == line(containing: "level =", in: text))
    }

    @Test func retryMaxBelowRetryMin() throws {
        let text = withCloud("retry_min = \"2s\"\nretry_max = \"1999ms\"")
        let error = try #require(expectRefusal(text, key: "cloud.retry_max", reason: "at least retry_min (2s)"))
        #expect(error.line == line(containing: "retry_max", in: text))
        // Against the default retry_max (60s) too.
        expectRefusal(withCloud("retry_min = \"2m\""), key: "cloud.retry_max", reason: "at least retry_min (2m)")
    }

    @Test func durationLimits() {
        expectRefusal(withCloud("notify_wait = \"999ms\""), key: "cloud.notify_wait", reason: "at least 1s")
        expectRefusal(withCloud("notify_wait = \"10m1s\""), key: "cloud.notify_wait", reason: "at most 10m")
        expectRefusal(withCloud("request_timeout = \"500ms\""), key: "cloud.request_timeout", reason: "at least 1s")
        expectRefusal(withCloud("retry_min = \"0s\""), key: "cloud.retry_min", reason: "at least 1ms")
    }

    @Test(arguments: ["\"5s\"", "\"1h\"", "\"often\"", "5"])
    func syncIntervalIsRemoved(_ value: String) throws {
        // Any value, even a valid duration: the key no longer does anything, and keeping it
        // quietly would let an operator believe it still sets the pace.
        let text = withCloud("sync_interval = \(value)")
        let error = try #require(
            expectRefusal(
                text, key: "cloud.sync_interval",
                reason: "removed: changes now go by each table's upload.max_delay; see [[uplinks]]"))
        #expect(!error.reason.contains("unknown key"))
        #expect(error.line == line(containing: "sync_interval", in: text))
    }

    @Test func flushBytesOutOfRange() throws {
        for bytes in [1_023, 0, -1, 1_073_741_825] {
            let error = try #require(
                expectRefusal(withCloud("flush_bytes = \(bytes)"), key: "cloud.flush_bytes", reason: "out of range"))
            #expect(error.reason == "\(bytes) is out of range 1024…1073741824")
        }
        expectRefusal(withCloud("flush_bytes = \"1MiB\""), key: "cloud.flush_bytes", reason: "wrong type")
    }

    @Test func notifyNetworksMustBeDeclaredClasses() throws {
        let text = withCloud("notify_networks = [\"wifi\", \"lora\"]")
        let error = try #require(
            expectRefusal(
                text, key: "cloud.notify_networks[1]",
                reason: "unknown network class 'lora'; declared classes: wired, wifi, cellular, satellite"))
        #expect(error.line == line(containing: "notify_networks", in: text))
        // Declared classes replace the defaults: "wifi" is no longer one.
        expectRefusal(
            "[network]\nclasses = [\"ethernet\", \"lte\"]\n" + withCloud("notify_networks = [\"wifi\"]"),
            key: "cloud.notify_networks[0]", reason: "unknown network class 'wifi'; declared classes: ethernet, lte")
    }

    @Test func notifyNetworksWrongTypes() {
        expectRefusal(withCloud("notify_networks = \"wifi\""), key: "cloud.notify_networks", reason: "wrong type")
        expectRefusal(withCloud("notify_networks = [\"wifi\", 2]"), key: "cloud.notify_networks[1]", reason: "wrong type")
    }

    @Test func maxBatchRowsOutOfRange() {
        expectRefusal(withCloud("max_batch_rows = 0"), key: "cloud.max_batch_rows", reason: "out of range")
        expectRefusal(withCloud("max_batch_rows = 1000001"), key: "cloud.max_batch_rows", reason: "out of range")
    }

    @Test func unknownKey() throws {
        let text = withCloud("timeout = \"30s\"")
        let error = try #require(expectRefusal(text, key: "cloud.timeout", reason: "unknown key"))
        #expect(error.reason.contains("request_timeout"))
        #expect(error.reason.contains("flush_bytes, notify_networks"))
        #expect(!error.reason.contains("sync_interval"))
        #expect(error.line == line(containing: "timeout = \"30s\"", in: text))
    }

    @Test func wrongTypes() {
        expectRefusal("cloud = \"http://x\"\n" + standalone, key: "cloud", reason: "wrong type")
        expectRefusal(
            withCloud().replacingOccurrences(of: "\"http://127.0.0.1:8090\"", with: "8090"), key: "cloud.url",
            reason: "wrong type")
        expectRefusal(withCloud("level = \"3\""), key: "cloud.level", reason: "wrong type")
        expectRefusal(withCloud("compression = \"none\"\nlevel = 1.5"), key: "cloud.level", reason: "wrong type")
        expectRefusal(withCloud("notify_wait = 60"), key: "cloud.notify_wait", reason: "wrong type")
    }
}

@Suite("GatewayConfig [cloud]: several cloud nodes")
struct CloudLinkNodesTests {
    static func nodes(_ list: String) -> String {
        withCloud().replacingOccurrences(of: "\"http://127.0.0.1:8090\"", with: list)
    }

    @Test func aListOfURLsNamesTheNodesThePreferredFirst() throws {
        let cloud = try #require(try link(Self.nodes("[\"http://a:8090/\", \"http://b:8090\"]")))
        #expect(cloud.url == "http://a:8090")
        #expect(cloud.standbyURLs == ["http://b:8090"])
        #expect(cloud.nodeURLs == ["http://a:8090", "http://b:8090"])
        // The implicit uplink goes to the same nodes.
        let config = try GatewayConfig.parse(text: Self.nodes("[\"http://a:8090\", \"http://b:8090\"]"), file: testFileName)
        #expect(config.uplinks.map(\.nodeURLs) == [["http://a:8090", "http://b:8090"]])
    }

    @Test func aSingleURLStaysValid() throws {
        let cloud = try #require(try link(withCloud()))
        #expect(cloud.nodeURLs == ["http://127.0.0.1:8090"])
    }

    @Test func badListsAreRefusedNamingTheEntry() {
        expectRefusal(Self.nodes("[]"), key: "cloud.url", reason: "empty list")
        expectRefusal(Self.nodes("[\"http://a\", \"ftp://b\"]"), key: "cloud.url[1]", reason: "expected http://")
        expectRefusal(Self.nodes("[\"http://a\", \"http://a/\"]"), key: "cloud.url[1]", reason: "listed twice")
        expectRefusal(Self.nodes("[\"http://a\", 8090]"), key: "cloud.url[1]", reason: "wrong type")
    }
}
