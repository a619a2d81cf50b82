import DallyCore
import Testing

@testable import DallyConfig

// MARK: - Helpers

private let adminToken = "cloud-admin-token-0123456789"
private let secretA = "gateway-a-secret-0123456789"

/// The smallest valid cloud configuration: an admin token and one gateway.
private let minimal = """
    [admin]
    token = "\(adminToken)"

    [[gateways]]
    id = "gateway-a"
    secret = "\(secretA)"

    """

private func parse(_ text: String) throws -> CloudConfig {
    try CloudConfig.parse(text: text, file: testFileName)
}

/// Asserts that `text` is refused for `key` with a reason containing `reason`.
@discardableResult
private func expectRefusal(
    _ text: String, key: String?, reason: String, sourceLocation: SourceLocation = #_sourceLocation
) -> ConfigError? {
    expectRefusal(text, key: key, reason: reason, parse: CloudConfig.parse(text:file:), sourceLocation: sourceLocation)
}

// MARK: - Valid configurations

@Suite("CloudConfig: valid files")
struct CloudConfigValidTests {
    @Test func defaultsWhenSectionsAreOmitted() throws {
        let config = try parse(minimal)

        #expect(config.server == ServerSettings.cloudDefaults)
        #expect(config.server.host == "127.0.0.1")
        #expect(config.server.port == 8090)
        #expect(config.server.dataDirectory == "data/cloud")
        #expect(config.server.logLevel == "info")
        #expect(config.server.backlog == 1024)
        #expect(config.store.synchronousFull)
        #expect(config.limits.maxBodyBytes == 8_388_608)
        #expect(config.limits.maxDecompressedBytes == 67_108_864)
        #expect(config.limits.maxRowsPerBatch == 10_000)
        #expect(config.limits.maxPageRows == 1_000)
        #expect(config.limits.maxWaiters == 10_000)
        #expect(config.limits.maxWait == .seconds(120))
        #expect(config.keepAnswers == .seconds(7 * 86_400))
        #expect(config.adminToken == adminToken)
        #expect(config.gateways == [GatewayCredential(id: "gateway-a", secret: secretA)])
        #expect(config.tables.isEmpty)
    }

    @Test func emptySectionsKeepDefaults() throws {
        let config = try parse(minimal + "[server]\n[store]\n[limits]\n[batches]\n")
        #expect(config.server == .cloudDefaults)
        #expect(config.store == StoreSettings())
        #expect(config.limits == CloudConfig.Limits())
        #expect(config.keepAnswers == CloudConfig.defaultKeepAnswers)
    }

    @Test func fullFile() throws {
        let config = try parse(minimal + """
            [[gateways]]
            id = "Shop_2-b"
            secret = "gateway-b-secret-0123456789"

            [server]
            host = "0.0.0.0"
            port = 9000
            data_dir = "/var/lib/dally-cloud"
            log_level = "warning"
            backlog = 64

            [store]
            synchronous = "normal"

            [limits]
            max_body_bytes = 2048
            max_decompressed_bytes = 4096
            max_rows_per_batch = 50
            max_page_rows = 20
            max_waiters = 3
            max_wait = "30s"

            [batches]
            keep_answers = "1h30m"
            max_clock_ahead = "5m"

            [[tables]]
            name = "orders"
            columns = ["customer TEXT", "total REAL"]
            conflict = "server_wins"
            """)
        #expect(config.server == ServerSettings(
            host: "0.0.0.0", port: 9000, dataDirectory: "/var/lib/dally-cloud", logLevel: "warning", backlog: 64))
        #expect(!config.store.synchronousFull)
        #expect(config.limits.maxBodyBytes == 2048)
        #expect(config.limits.maxDecompressedBytes == 4096)
        #expect(config.limits.maxRowsPerBatch == 50)
        #expect(config.limits.maxPageRows == 20)
        #expect(config.limits.maxWaiters == 3)
        #expect(config.limits.maxWait == .seconds(30))
        #expect(config.keepAnswers == .seconds(5_400))
        #expect(config.maxClockAhead == .seconds(300))
        #expect(config.gateways.map(\.id) == ["gateway-a", "Shop_2-b"])
        #expect(config.gateways[1].secret == "gateway-b-secret-0123456789")
        try #require(config.tables.count == 1)
        #expect(config.tables[0].name == "orders")
        #expect(config.tables[0].conflict == .serverWins)
        #expect(config.tables[0].columns == [Column(name: "customer", type: .text), Column(name: "total", type: .real)])
    }

    @Test func boundaries() throws {
        let longID = String(repeating: "g", count: 63)
        let config = try parse("""
            [admin]
            token = "\(adminToken)"

            [[gateways]]
            id = "\(longID)"
            secret = "0123456789abcdef"

            [[gateways]]
            id = "-"
            secret = "fedcba9876543210"

            [limits]
            max_body_bytes = 1073741824
            max_decompressed_bytes = 1073741824
            max_waiters = 1

            [batches]
            keep_answers = "1m"
            """)
        #expect(config.gateways.map(\.id) == [longID, "-"])
        #expect(config.limits.maxDecompressedBytes == config.limits.maxBodyBytes)
        #expect(config.limits.maxWaiters == 1)
        #expect(config.keepAnswers == .seconds(60))
        #expect(config.maxClockAhead == CloudConfig.defaultMaxClockAhead)
    }

    /// The cloud has no [network] section: tables may name any class, so that a gateway's
    /// [[tables]] block can be pasted as it is; unnamed networks default to the gateway's default classes.
    @Test func tablesMayNameAnyNetworkClass() throws {
        let config = try parse(minimal + """
            [[tables]]
            name = "photos"
            columns = ["image OBJECT"]
            upload = { networks = ["ethernet", "lte"] }
            download_objects = { networks = ["sat"], on_demand = true }
            """)
        let policy = try #require(config.tables.first).policy
        #expect(policy.uploadRows == UploadPolicy(maxDelay: .seconds(60), networks: ["ethernet", "lte"]))
        #expect(policy.downloadObjects == DownloadPolicy(period: .seconds(600), networks: ["sat"], onDemand: true))
        #expect(policy.downloadRows.networks == GatewayConfig.defaultNetworkClasses)
        #expect(policy.uploadObjects.networks == GatewayConfig.defaultNetworkClasses)
    }

    @Test(arguments: ["1", "a", "A", "0123456789", "gateway_a", "gateway-a", "--"])
    func validGatewayIDs(_ id: String) {
        #expect(GatewayCredential.isValidID(id))
    }

    @Test(arguments: ["", "gateway a", "gw.a", "gw/a", "gåte", "tab\tid", String(repeating: "g", count: 64)])
    func invalidGatewayIDs(_ id: String) {
        #expect(!GatewayCredential.isValidID(id))
    }
}

// MARK: - Refusals

@Suite("CloudConfig: refusals")
struct CloudConfigRefusalTests {
    @Test func missingAdmin() throws {
        let text = "[[gateways]]\nid = \"a\"\nsecret = \"\(secretA)\"\n"
        let error = try #require(expectRefusal(text, key: "admin", reason: "missing"))
        #expect(error.line == nil)
        expectRefusal("[admin]\n" + text, key: "admin.token", reason: "missing")
    }

    @Test(arguments: ["short", "fifteen-chars-x", "sixteen chars xx"])
    func adminTokenTooShortOrNotPrintable(_ token: String) {
        let text = minimal.replacingOccurrences(of: adminToken, with: token)
        expectRefusal(text, key: "admin.token", reason: "at least 16")
    }

    @Test func noGateways() throws {
        let error = try #require(
            expectRefusal("[admin]\ntoken = \"\(adminToken)\"\n", key: "gateways", reason: "missing"))
        #expect(error.reason.contains("at least one [[gateways]]"))
        #expect(error.line == nil)
    }

    @Test func gatewayWithoutIDOrSecret() {
        let admin = "[admin]\ntoken = \"\(adminToken)\"\n"
        expectRefusal(admin + "[[gateways]]\nsecret = \"\(secretA)\"\n", key: "gateways[0].id", reason: "missing")
        expectRefusal(admin + "[[gateways]]\nid = \"a\"\n", key: "gateways[0].secret", reason: "missing")
    }

    @Test(arguments: ["Gateway-A", "gateway-a"])
    func duplicateGatewayID(_ id: String) throws {
        let text = minimal + "[[gateways]]\nid = \"\(id)\"\nsecret = \"gateway-b-secret-0123456789\"\n"
        let error = try #require(expectRefusal(text, key: "gateways[1].id", reason: "duplicate gateway id '\(id)'"))
        // Two lines set `id`: the one in the second gateway's block.
        #expect(error.line == lastLine(containing: "id = \"\(id)\"", in: text))
    }

    @Test(arguments: ["", "gateway a", "gw.a", "gåte", String(repeating: "g", count: 64)])
    func badGatewayID(_ id: String) throws {
        let text = minimal.replacingOccurrences(of: "\"gateway-a\"", with: "\"\(id)\"")
        let error = try #require(expectRefusal(text, key: "gateways[0].id", reason: "bad gateway id"))
        #expect(error.reason.contains("letters, digits, _ or -"))
        #expect(error.line == line(containing: "id =", in: text))
    }

    @Test(arguments: ["tiny", "fifteen-chars-x", "with space in-it-x"])
    func shortSecret(_ secret: String) {
        let text = minimal.replacingOccurrences(of: secretA, with: secret)
        expectRefusal(text, key: "gateways[0].secret", reason: "at least 16")
    }

    @Test func duplicateSecret() {
        expectRefusal(
            minimal + "[[gateways]]\nid = \"gateway-b\"\nsecret = \"\(secretA)\"\n", key: "gateways[1].secret",
            reason: "duplicate secret")
        expectRefusal(
            minimal.replacingOccurrences(of: secretA, with: adminToken), key: "gateways[0].secret",
            reason: "duplicate secret")
    }

    @Test func maxDecompressedBelowMaxBody() throws {
        let text = minimal + "[limits]\nmax_body_bytes = 4096\nmax_decompressed_bytes = 4095\n"
        let error = try #require(
            expectRefusal(text, key: "limits.max_decompressed_bytes", reason: "at least max_body_bytes (4096)"))
        #expect(error.line == line(containing: "max_decompressed_bytes", in: text))
        // The default decompressed limit (64 MiB) is checked too.
        expectRefusal(
            minimal + "[limits]\nmax_body_bytes = 67108865\n", key: "limits.max_decompressed_bytes",
            reason: "at least max_body_bytes")
    }

    @Test(arguments: ["59s", "0s", "59999ms"])
    func keepAnswersTooShort(_ text: String) throws {
        let config = minimal + "[batches]\nkeep_answers = \"\(text)\"\n"
        let error = try #require(expectRefusal(config, key: "batches.keep_answers", reason: "at least 1m"))
        #expect(error.line == line(containing: "keep_answers", in: config))
    }

    @Test func maxClockAheadUnderASecondIsRefused() throws {
        let config = minimal + "[batches]\nmax_clock_ahead = \"999ms\"\n"
        let error = try #require(expectRefusal(config, key: "batches.max_clock_ahead", reason: "at least 1s"))
        #expect(error.line == line(containing: "max_clock_ahead", in: config))
    }

    @Test func keepAnswersBadDurationOrType() {
        expectRefusal(minimal + "[batches]\nkeep_answers = \"a week\"\n", key: "batches.keep_answers", reason: "bad duration")
        expectRefusal(minimal + "[batches]\nkeep_answers = 7\n", key: "batches.keep_answers", reason: "wrong type")
    }

    @Test func unknownKeysInEverySection() throws {
        let top = try #require(expectRefusal("bogus = 1\n" + minimal, key: "bogus", reason: "unknown key"))
        #expect(top.reason.contains("server, store, limits, batches, admin, gateways, tables"))
        // The gateway's sections are not the cloud's.
        expectRefusal(minimal + "[network]\nclasses = [\"wifi\"]\n", key: "network", reason: "unknown key")
        // A gateway-only key.
        expectRefusal(minimal + "[store]\nsync_piece_rows = 64\n", key: "store.sync_piece_rows", reason: "unknown key")
        // Browsers call the gateway, not the cloud.
        expectRefusal(minimal + "[server]\ncors_origins = [\"*\"]\n", key: "server.cors_origins", reason: "unknown key")
        expectRefusal(minimal + "[store]\nmax_bytes = 8589934592\n", key: "store.max_bytes", reason: "unknown key")
        expectRefusal(minimal + "[cloud]\nurl = \"http://x\"\n", key: "cloud", reason: "unknown key")
        expectRefusal(minimal + "[[clients]]\nname = \"a\"\n", key: "clients", reason: "unknown key")
        expectRefusal(minimal + "[server]\nhots = \"x\"\n", key: "server.hots", reason: "unknown key")
        expectRefusal(minimal + "[store]\nsync = \"full\"\n", key: "store.sync", reason: "unknown key")
        let limits = try #require(
            expectRefusal(minimal + "[limits]\nmax_decompressed = 1\n", key: "limits.max_decompressed", reason: "unknown key"))
        #expect(limits.reason.contains("max_decompressed_bytes"))
        expectRefusal(minimal + "[batches]\nkeep = \"1d\"\n", key: "batches.keep", reason: "unknown key")
        expectRefusal(
            minimal.replacingOccurrences(of: "[admin]\n", with: "[admin]\nuser = \"root\"\n"), key: "admin.user",
            reason: "unknown key")
        expectRefusal(minimal + "name = \"a\"\n", key: "gateways[0].name", reason: "unknown key")
        expectRefusal(
            minimal + "[[tables]]\nname = \"t\"\ncolumns = []\nprimary_key = \"id\"\n", key: "tables[0].primary_key",
            reason: "unknown key")
    }

    @Test func wrongTypes() {
        expectRefusal("gateways = \"a\"\n[admin]\ntoken = \"\(adminToken)\"\n", key: "gateways", reason: "wrong type")
        expectRefusal(minimal.replacingOccurrences(of: "\"gateway-a\"", with: "1"), key: "gateways[0].id", reason: "wrong type")
        expectRefusal(
            minimal + "[limits]\nmax_decompressed_bytes = \"64M\"\n", key: "limits.max_decompressed_bytes",
            reason: "wrong type")
        expectRefusal("batches = 1\n" + minimal, key: "batches", reason: "wrong type")
    }

    @Test func rangeChecks() {
        expectRefusal(minimal + "[limits]\nmax_waiters = 0\n", key: "limits.max_waiters", reason: "out of range")
        expectRefusal(minimal + "[limits]\nmax_body_bytes = 1023\n", key: "limits.max_body_bytes", reason: "out of range")
        expectRefusal(
            minimal + "[limits]\nmax_decompressed_bytes = 1023\n", key: "limits.max_decompressed_bytes", reason: "out of range")
        expectRefusal(minimal + "[limits]\nmax_wait = \"500ms\"\n", key: "limits.max_wait", reason: "at least 1s")
        expectRefusal(minimal + "[server]\nlog_level = \"loud\"\n", key: "server.log_level", reason: "use one of")
        expectRefusal(minimal + "[server]\nkeepalive_timeout = \"500ms\"\n", key: "server.keepalive_timeout", reason: "at least 1s")
        expectRefusal(minimal + "[store]\nsynchronous = \"off\"\n", key: "store.synchronous", reason: "use full or normal")
    }

    @Test func tablesAreCheckedAsOnTheGateway() {
        expectRefusal(
            minimal + "[[tables]]\nname = \"t\"\ncolumns = [\"id TEXT\"]\n", key: "tables[0].columns[0]", reason: "reserved")
        expectRefusal(
            minimal + "[[tables]]\nname = \"t\"\ncolumns = []\nupload = { networks = [\"wi fi\"] }\n",
            key: "tables[0].upload.networks[0]", reason: "bad network class name 'wi fi'")
    }
}

// MARK: - The shipped files

@Suite("Shipped configuration files")
struct ShippedConfigTests {
    @Test func cloudFileParses() throws {
        let config = try CloudConfig.load(path: shippedConfig("cloud.toml"))
        #expect(config.server == .cloudDefaults)
        #expect(config.limits == CloudConfig.Limits())
        #expect(config.keepAnswers == CloudConfig.defaultKeepAnswers)
        #expect(config.adminToken == "dev-cloud-admin-token-change-me")
        #expect(
            config.gateways == [
                GatewayCredential(id: "gateway-a", secret: "dev-gateway-a-secret-change-me"),
                GatewayCredential(id: "gateway-b", secret: "dev-gateway-b-secret-change-me"),
            ]
        )
        #expect(config.tables.map(\.name) == ["orders", "telemetry", "photos"])
    }

    @Test func gatewayFileParsesAndLinksToTheShippedCloud() throws {
        let gateway = try GatewayConfig.load(path: shippedConfig("gateway.toml"))
        let cloud = try CloudConfig.load(path: shippedConfig("cloud.toml"))
        let link = try #require(gateway.cloud)
        var expected = CloudLink(url: "http://127.0.0.1:8090", gatewayID: "gateway-a", secret: "dev-gateway-a-secret-change-me")
        expected.compression = .zstd
        #expect(link == expected)
        #expect(link.url.hasSuffix(":\(cloud.server.port)"))
        #expect(cloud.gateways.contains(GatewayCredential(id: link.gatewayID, secret: link.secret)))
        // Same blocks, same schemas, policies included.
        #expect(gateway.tables == cloud.tables)
    }
}
