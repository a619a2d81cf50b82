import DallyCore
import Testing

@testable import DallyConfig

// MARK: - Helpers

private let adminToken = "admin-token-0123456789"

/// The smallest valid configuration: an admin token and one table.
private let minimal = """
    [admin]
    token = "\(adminToken)"

    [[tables]]
    name = "orders"
    columns = ["customer TEXT"]

    """

private func parse(_ text: String) throws -> GatewayConfig {
    try GatewayConfig.parse(text: text, file: testFileName)
}

/// Parses `text`, returning the error it throws, or nil when it is valid.
private func configError(_ text: String) -> ConfigError? {
    configError(text, GatewayConfig.parse(text:file:))
}

// MARK: - Valid configurations

@Suite("GatewayConfig: valid files")
struct GatewayConfigValidTests {
    static let full = """
        # A configuration that sets everything.
        [server]
        host = "0.0.0.0"
        port = 9090
        data_dir = "/var/lib/dally"
        log_level = "debug"
        backlog = 128
        keepalive_timeout = "2m"
        body_timeout = "90s"

        [store]
        synchronous = "normal"
        sync_piece_rows = 64

        [limits]
        max_body_bytes = 2048
        max_rows_per_batch = 500
        max_page_rows = 50
        max_waiters = 1000
        max_wait = "5m"

        [admin]
        token = "admin-token-0123456789"

        [network]
        classes = ["ethernet", "lte", "sat"]

        [[clients]]
        name = "pos"
        token = "pos-token-0123456789"
        read = ["*"]
        write = ["orders"]

        [[clients]]
        name = "dashboard"
        token = "dash-token-0123456789"
        read = ["orders", "events"]

        [[tables]]
        name = "orders"
        columns = ["customer TEXT", "total REAL", "paid BOOLEAN", "items JSON", "qty integer", "photo Blob", "receipt OBJECT"]
        conflict = "server_wins"
        local_only = false
        atomic_sync = true
        upload = { max_delay = "2m", networks = ["ethernet"] }
        upload_objects = { max_delay = "1h30m", networks = ["ethernet", "lte"] }
        download = { period = "30s", networks = ["lte"] }
        download_objects = { period = "1d", networks = ["ethernet"], on_demand = true }

        [[tables]]
        name = "events"
        columns = ["kind  TEXT"]
        conflict = "client_wins"
        local_only = true

        [[tables]]
        name = "notes"
        columns = []
        conflict = "manual"

        [[tables]]
        name = "_lww"
        columns = ["a TEXT"]
        conflict = "last_writer_wins"

        [tables.download]
        period = "1s"
        """

    @Test func fullFile() throws {
        let config = try parse(Self.full)

        #expect(config.server.host == "0.0.0.0")
        #expect(config.server.port == 9090)
        #expect(config.server.dataDirectory == "/var/lib/dally")
        #expect(config.server.logLevel == "debug")
        #expect(config.server.backlog == 128)
        #expect(config.server.keepaliveTimeout == .seconds(120))
        #expect(config.server.bodyTimeout == .seconds(90))

        #expect(config.store.synchronousFull == false)
        #expect(config.store.syncPieceRows == 64)

        #expect(config.limits.maxBodyBytes == 2048)
        #expect(config.limits.maxRowsPerBatch == 500)
        #expect(config.limits.maxPageRows == 50)
        #expect(config.limits.maxWaiters == 1000)
        #expect(config.limits.maxWait == .seconds(300))

        #expect(config.adminToken == "admin-token-0123456789")
        #expect(config.networkClasses == ["ethernet", "lte", "sat"])

        try #require(config.clients.count == 2)
        let pos = config.clients[0]
        #expect(pos.name == "pos")
        #expect(pos.token == "pos-token-0123456789")
        #expect(pos.read == ["*"])
        #expect(pos.write == ["orders"])
        #expect(pos.mayRead("events") && pos.mayRead("anything"))
        #expect(pos.mayWrite("orders") && !pos.mayWrite("events"))
        let dashboard = config.clients[1]
        #expect(dashboard.name == "dashboard")
        #expect(dashboard.read == ["orders", "events"])
        #expect(dashboard.write.isEmpty)
        #expect(dashboard.mayRead("events") && !dashboard.mayRead("notes"))
        #expect(!dashboard.mayWrite("orders"))

        #expect(config.tables.map(\.name) == ["orders", "events", "notes", "_lww"])
        #expect(config.tables.map(\.conflict) == [.serverWins, .clientWins, .manual, .lastWriterWins])

        let orders = config.tables[0]
        #expect(
            orders.columns == [
                Column(name: "customer", type: .text), Column(name: "total", type: .real),
                Column(name: "paid", type: .boolean), Column(name: "items", type: .json),
                Column(name: "qty", type: .integer), Column(name: "photo", type: .blob),
                Column(name: "receipt", type: .object),
            ]
        )
        #expect(orders.columnIndex("qty") == 4)
        #expect(
            orders.policy
                == SyncPolicy(
                    localOnly: false,
                    atomicSync: true,
                    uploadRows: UploadPolicy(maxDelay: .seconds(120), networks: ["ethernet"]),
                    uploadObjects: UploadPolicy(maxDelay: .seconds(5_400), networks: ["ethernet", "lte"]),
                    downloadRows: DownloadPolicy(period: .seconds(30), networks: ["lte"]),
                    downloadObjects: DownloadPolicy(period: .seconds(86_400), networks: ["ethernet"], onDemand: true)
                )
        )

        let events = config.tables[1]
        #expect(events.columns == [Column(name: "kind", type: .text)])
        #expect(events.policy.localOnly)
        #expect(!events.policy.atomicSync)
        // Networks default to every declared class.
        #expect(events.policy.uploadRows == UploadPolicy(maxDelay: .seconds(60), networks: ["ethernet", "lte", "sat"]))

        #expect(config.tables[2].columns.isEmpty)

        let lww = config.tables[3]
        #expect(lww.policy.downloadRows == DownloadPolicy(period: .seconds(1), networks: ["ethernet", "lte", "sat"]))
    }

    @Test func defaultsWhenSectionsAreOmitted() throws {
        let config = try parse(minimal)

        #expect(config.server.host == "127.0.0.1")
        #expect(config.server.port == 8080)
        #expect(config.server.dataDirectory == "data/gateway")
        #expect(config.server.logLevel == "info")
        #expect(config.server.backlog == 4096)
        #expect(config.server.keepaliveTimeout == .seconds(75))
        #expect(config.server.bodyTimeout == .seconds(60))
        #expect(config.store.synchronousFull == true)
        #expect(config.store.syncPieceRows == 256)
        #expect(config.limits.maxBodyBytes == 4 * 1024 * 1024)
        #expect(config.limits.maxRowsPerBatch == 10_000)
        #expect(config.limits.maxPageRows == 1_000)
        #expect(config.limits.maxWaiters == 0)
        #expect(config.limits.maxWait == .seconds(120))
        #expect(config.adminToken == adminToken)
        #expect(config.clients.isEmpty)
        #expect(config.networkClasses == ["wired", "wifi", "cellular", "satellite"])

        try #require(config.tables.count == 1)
        let table = config.tables[0]
        #expect(table.name == "orders")
        #expect(table.columns == [Column(name: "customer", type: .text)])
        #expect(table.conflict == .lastWriterWins)
        let all = ["wired", "wifi", "cellular", "satellite"]
        #expect(
            table.policy
                == SyncPolicy(
                    localOnly: false,
                    atomicSync: false,
                    uploadRows: UploadPolicy(maxDelay: .seconds(60), networks: all),
                    uploadObjects: UploadPolicy(maxDelay: .seconds(600), networks: all),
                    downloadRows: DownloadPolicy(period: .seconds(60), networks: all),
                    downloadObjects: DownloadPolicy(period: .seconds(600), networks: all, onDemand: false)
                )
        )
    }

    @Test func emptySectionsKeepDefaults() throws {
        let config = try parse(minimal + "\n[server]\n[store]\n[limits]\n[network]\n")
        #expect(config.server.port == 8080)
        #expect(config.store.synchronousFull)
        #expect(config.limits.maxWait == .seconds(120))
        #expect(config.networkClasses == GatewayConfig.defaultNetworkClasses)
    }

    @Test func noTablesIsValid() throws {
        let config = try parse("[admin]\ntoken = \"\(adminToken)\"\n")
        #expect(config.tables.isEmpty)
    }

    @Test func limitsBoundaries() throws {
        let config = try parse(minimal + """
            [limits]
            max_body_bytes = 1024
            max_rows_per_batch = 1
            max_page_rows = 100000
            max_waiters = 0
            max_wait = "1s"

            [server]
            port = 0
            backlog = 65535
            log_level = "critical"

            [store]
            synchronous = "full"
            """)
        #expect(config.limits.maxBodyBytes == 1024)
        #expect(config.limits.maxRowsPerBatch == 1)
        #expect(config.limits.maxPageRows == 100_000)
        #expect(config.limits.maxWait == .seconds(1))
        #expect(config.server.port == 0)
        #expect(config.server.backlog == 65535)
        #expect(config.server.logLevel == "critical")
        #expect(config.store.synchronousFull)
    }

    @Test func maxWaitInCompoundUnits() throws {
        #expect(try parse(minimal + "[limits]\nmax_wait = \"1m30s\"\n").limits.maxWait == .seconds(90))
    }

    @Test(arguments: GatewayConfig.logLevels)
    func everyLogLevel(_ level: String) throws {
        #expect(try parse(minimal + "[server]\nlog_level = \"\(level)\"\n").server.logLevel == level)
    }
}

// MARK: - Refusals

@Suite("GatewayConfig: refusals")
struct GatewayConfigRefusalTests {
    /// Asserts that `text` is refused for `key` with a reason containing `reason`.
    @discardableResult
    private func expectRefusal(
        _ text: String, key: String?, reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> ConfigError? {
        DallyConfigTests.expectRefusal(
            text, key: key, reason: reason, parse: GatewayConfig.parse(text:file:), sourceLocation: sourceLocation)
    }

    // Syntax

    @Test func syntaxErrorHasALineNumber() throws {
        let text = "[admin]\ntoken = \"\(adminToken)\"\nthis is not toml\n"
        let error = try #require(expectRefusal(text, key: nil, reason: "syntax error"))
        #expect(error.line == 3)
        #expect(error.description.hasPrefix("dally.toml:3: syntax error"))
    }

    @Test func syntaxErrorLaterInTheFile() throws {
        let text = minimal + "\n[server]\nport = 80 80\n"
        let error = try #require(expectRefusal(text, key: nil, reason: "syntax error"))
        #expect(error.line == line(containing: "port = 80 80", in: text))
    }

    @Test func duplicateKeyIsASyntaxError() throws {
        let text = minimal + "\n[server]\nport = 1\nport = 2\n"
        let error = try #require(expectRefusal(text, key: nil, reason: "syntax error"))
        #expect(error.line != nil)
    }

    // Unknown keys

    @Test func unknownTopLevelKey() throws {
        let text = "bogus = 1\n" + minimal
        let error = try #require(expectRefusal(text, key: "bogus", reason: "unknown key"))
        #expect(error.line == 1)
        #expect(error.reason.contains("server, store, limits, admin, clients, network, tables"))
    }

    @Test func unknownTopLevelTable() throws {
        let text = minimal + "\n[sever]\nport = 1\n"
        let error = try #require(expectRefusal(text, key: "sever", reason: "unknown key"))
        #expect(error.line == line(containing: "[sever]", in: text))
    }

    @Test func unknownNestedKey() throws {
        let text = minimal + "\n[limits]\nmax_waiters = 10\nmax_wiaters = 5\n"
        let error = try #require(expectRefusal(text, key: "limits.max_wiaters", reason: "unknown key"))
        #expect(error.line == line(containing: "max_wiaters", in: text))
        #expect(error.reason.contains("max_waiters"))
    }

    @Test func unknownKeysInEverySection() {
        expectRefusal(minimal + "[server]\nhots = \"x\"\n", key: "server.hots", reason: "unknown key")
        expectRefusal(minimal + "[store]\nsync = \"full\"\n", key: "store.sync", reason: "unknown key")
        expectRefusal(minimal + "[network]\nclass = []\n", key: "network.class", reason: "unknown key")
        expectRefusal(
            "[admin]\ntoken = \"\(adminToken)\"\nuser = \"root\"\n", key: "admin.user", reason: "unknown key")
        expectRefusal(
            minimal + "[[clients]]\nname = \"a\"\ntoken = \"client-token-0123456789\"\nreads = []\n",
            key: "clients[0].reads", reason: "unknown key")
        expectRefusal(minimal + "primary_key = \"id\"\n", key: "tables[0].primary_key", reason: "unknown key")
        expectRefusal(
            minimal + "upload = { delay = \"1m\" }\n", key: "tables[0].upload.delay", reason: "unknown key")
        // `on_demand` is for objects only.
        expectRefusal(
            minimal + "download = { on_demand = true }\n", key: "tables[0].download.on_demand", reason: "unknown key")
    }

    // Wrong types

    @Test func portGivenAsString() throws {
        let text = minimal + "\n[server]\nport = \"80\"\n"
        let error = try #require(expectRefusal(text, key: "server.port", reason: "wrong type"))
        #expect(error.reason.contains("integer"))
        #expect(error.line == line(containing: "port = \"80\"", in: text))
        #expect(error.description == "dally.toml:\(error.line ?? 0): server.port: \(error.reason)")
    }

    @Test func otherWrongTypes() {
        expectRefusal(minimal + "[server]\nhost = 1\n", key: "server.host", reason: "wrong type")
        expectRefusal(minimal + "[limits]\nmax_wait = 30\n", key: "limits.max_wait", reason: "wrong type")
        expectRefusal(minimal + "local_only = \"yes\"\n", key: "tables[0].local_only", reason: "wrong type")
        expectRefusal(minimal + "[network]\nclasses = \"wifi\"\n", key: "network.classes", reason: "wrong type")
        expectRefusal(minimal + "[network]\nclasses = [\"wifi\", 3]\n", key: "network.classes[1]", reason: "wrong type")
        expectRefusal("server = 1\n" + minimal, key: "server", reason: "wrong type")
        expectRefusal("admin = \"secret\"\n", key: "admin", reason: "wrong type")
        expectRefusal(
            "tables = \"orders\"\n[admin]\ntoken = \"\(adminToken)\"\n", key: "tables", reason: "wrong type")
        expectRefusal(
            "[admin]\ntoken = \"\(adminToken)\"\n[tables]\nname = \"orders\"\n", key: "tables", reason: "wrong type")
        expectRefusal(
            "[admin]\ntoken = \"\(adminToken)\"\n[[tables]]\nname = \"t\"\ncolumns = \"a TEXT\"\n",
            key: "tables[0].columns", reason: "wrong type")
    }

    // Columns

    @Test func unknownColumnType() throws {
        let text = minimal.replacingOccurrences(of: "\"customer TEXT\"", with: "\"customer TEXT\", \"n STRING\"")
        let error = try #require(expectRefusal(text, key: "tables[0].columns[1]", reason: "unknown column type"))
        #expect(error.reason.contains("'STRING'"))
        #expect(error.reason.contains("TEXT, INTEGER, REAL, BOOLEAN, BLOB, JSON, OBJECT"))
        #expect(error.line == line(containing: "columns =", in: text))
    }

    @Test(arguments: ["x", "", "a TEXT extra", "a\tTEXT"])
    func badColumnDeclaration(_ declaration: String) throws {
        let text = minimal.replacingOccurrences(of: "\"customer TEXT\"", with: "\"\(declaration)\"")
        let error = try #require(expectRefusal(text, key: "tables[0].columns[0]", reason: "name TYPE"))
        #expect(error.line == line(containing: "columns =", in: text))
    }

    @Test(arguments: ["1abc TEXT", "a-b TEXT", "café TEXT"])
    func badColumnName(_ declaration: String) {
        let text = minimal.replacingOccurrences(of: "\"customer TEXT\"", with: "\"\(declaration)\"")
        expectRefusal(text, key: "tables[0].columns[0]", reason: "bad column name")
    }

    @Test(arguments: ["id TEXT", "ID TEXT", "seq INTEGER", "updated_at INTEGER", "deleted BOOLEAN", "values JSON"])
    func reservedColumnName(_ declaration: String) {
        let text = minimal.replacingOccurrences(of: "\"customer TEXT\"", with: "\"customer TEXT\", \"\(declaration)\"")
        expectRefusal(text, key: "tables[0].columns[1]", reason: "reserved")
    }

    @Test(arguments: ["customer INTEGER", "Customer TEXT", "CUSTOMER JSON"])
    func duplicateColumn(_ declaration: String) {
        let text = minimal.replacingOccurrences(of: "\"customer TEXT\"", with: "\"customer TEXT\", \"\(declaration)\"")
        expectRefusal(text, key: "tables[0].columns[1]", reason: "duplicate column")
    }

    @Test func tooManyColumns() {
        let columns = (0...200).map { "\"c\($0) TEXT\"" }.joined(separator: ", ")
        let text = minimal.replacingOccurrences(of: "\"customer TEXT\"", with: columns)
        expectRefusal(text, key: "tables[0].columns", reason: "at most 200")
    }

    @Test func exactlyTwoHundredColumnsAreAccepted() throws {
        let columns = (0..<200).map { "\"c\($0) TEXT\"" }.joined(separator: ", ")
        let text = minimal.replacingOccurrences(of: "\"customer TEXT\"", with: columns)
        #expect(try parse(text).tables[0].columns.count == 200)
    }

    // Tables

    @Test func duplicateTable() throws {
        let text = minimal + "\n[[tables]]\nname = \"orders\"\ncolumns = []\n"
        let error = try #require(expectRefusal(text, key: "tables[1].name", reason: "duplicate table"))
        // Two lines set `name`: the one in the second entry's block.
        #expect(error.line == lastLine(containing: "name = \"orders\"", in: text))
    }

    @Test func duplicateTableIgnoresCase() {
        let text = minimal + "\n[[tables]]\nname = \"Orders\"\ncolumns = []\n"
        expectRefusal(text, key: "tables[1].name", reason: "duplicate table 'Orders'")
    }

    @Test func tableWithoutName() {
        expectRefusal(
            "[admin]\ntoken = \"\(adminToken)\"\n[[tables]]\ncolumns = []\n", key: "tables[0].name", reason: "missing")
    }

    @Test(arguments: ["1orders", "order-lines", "", String(repeating: "t", count: 64)])
    func badTableName(_ name: String) {
        let text = minimal.replacingOccurrences(of: "name = \"orders\"", with: "name = \"\(name)\"")
        expectRefusal(text, key: "tables[0].name", reason: "bad table name")
    }

    @Test func tableWithoutColumns() {
        expectRefusal(
            "[admin]\ntoken = \"\(adminToken)\"\n[[tables]]\nname = \"t\"\n", key: "tables[0].columns", reason: "missing")
    }

    @Test func unknownConflictPolicy() throws {
        let text = minimal + "conflict = \"newest_wins\"\n"
        let error = try #require(expectRefusal(text, key: "tables[0].conflict", reason: "unknown conflict policy"))
        #expect(error.reason.contains("server_wins, client_wins, last_writer_wins, manual"))
        #expect(error.line == line(containing: "conflict", in: text))
    }

    // Durations

    @Test func badDuration() throws {
        let text = minimal + "\n[limits]\nmax_wait = \"5x\"\n"
        let error = try #require(expectRefusal(text, key: "limits.max_wait", reason: "bad duration"))
        #expect(error.reason.contains("\"5x\""))
        #expect(error.line == line(containing: "max_wait", in: text))
    }

    @Test func badDurationInTablePolicies() {
        expectRefusal(minimal + "upload = { max_delay = \"soon\" }\n", key: "tables[0].upload.max_delay", reason: "bad duration")
        expectRefusal(
            minimal + "[tables.download_objects]\nperiod = \"1h1h\"\n", key: "tables[0].download_objects.period",
            reason: "bad duration")
    }

    @Test func downloadPeriodBelowOneSecond() {
        expectRefusal(
            minimal + "download = { period = \"500ms\" }\n", key: "tables[0].download.period", reason: "at least 1s")
    }

    @Test(arguments: ["0s", "999ms"])
    func maxWaitBelowOneSecond(_ text: String) throws {
        let config = minimal + "\n[limits]\nmax_wait = \"\(text)\"\n"
        let error = try #require(expectRefusal(config, key: "limits.max_wait", reason: "at least 1s"))
        #expect(error.line == line(containing: "max_wait", in: config))
    }

    /// `default_wait` was removed from [limits]; a file that still sets it is refused.
    @Test func defaultWaitIsNoLongerAKey() throws {
        let text = minimal + "\n[limits]\nmax_wait = \"1m\"\ndefault_wait = \"30s\"\n"
        let error = try #require(expectRefusal(text, key: "limits.default_wait", reason: "unknown key"))
        #expect(error.line == line(containing: "default_wait", in: text))
    }

    // Network classes

    @Test func unknownNetworkClassInTable() throws {
        let text = minimal + "upload = { networks = [\"wired\", \"carrier_pigeon\"] }\n"
        let error = try #require(expectRefusal(text, key: "tables[0].upload.networks[1]", reason: "unknown network class"))
        #expect(error.reason.contains("'carrier_pigeon'"))
        #expect(error.reason.contains("wired, wifi, cellular, satellite"))
    }

    @Test func networkClassMustBeDeclaredInNetworkSection() {
        let text = "[network]\nclasses = [\"lan\"]\n" + minimal + "download_objects = { networks = [\"wifi\"] }\n"
        expectRefusal(text, key: "tables[0].download_objects.networks[0]", reason: "unknown network class 'wifi'")
    }

    @Test func badNetworkClasses() {
        expectRefusal(minimal + "[network]\nclasses = []\n", key: "network.classes", reason: "at least one")
        expectRefusal(
            minimal + "[network]\nclasses = [\"lan\", \"wi fi\"]\n", key: "network.classes[1]", reason: "bad class name")
        expectRefusal(
            minimal + "[network]\nclasses = [\"lan\", \"wan\", \"lan\"]\n", key: "network.classes[2]",
            reason: "duplicate class")
    }

    // Tokens and clients

    @Test func missingAdmin() throws {
        let text = "[[tables]]\nname = \"orders\"\ncolumns = []\n"
        let error = try #require(expectRefusal(text, key: "admin", reason: "missing"))
        #expect(error.line == nil)
    }

    @Test func adminWithoutToken() {
        expectRefusal("[admin]\n", key: "admin.token", reason: "missing")
    }

    @Test(arguments: ["short", "fifteen-chars-x", "sixteen chars xx", "tab\tin-the-token-x", "ünïcödé-token-0123"])
    func adminTokenTooShortOrNotPrintable(_ token: String) {
        expectRefusal("[admin]\ntoken = \"\(token)\"\n", key: "admin.token", reason: "at least 16")
    }

    @Test func sixteenCharacterTokenIsEnough() throws {
        #expect(try parse("[admin]\ntoken = \"0123456789abcdef\"\n").adminToken == "0123456789abcdef")
    }

    @Test func clientTokenTooShort() throws {
        let text = minimal + "\n[[clients]]\nname = \"pos\"\ntoken = \"tiny\"\n"
        let error = try #require(expectRefusal(text, key: "clients[0].token", reason: "at least 16"))
        // `token` is set on two lines (admin and client): the one in the client's block.
        #expect(error.line == lastLine(containing: "token = \"tiny\"", in: text))
    }

    @Test func clientTokenEqualToAdminToken() {
        let text = minimal + "\n[[clients]]\nname = \"pos\"\ntoken = \"\(adminToken)\"\n"
        expectRefusal(text, key: "clients[0].token", reason: "duplicate token")
    }

    @Test func twoClientsWithTheSameToken() {
        let text = minimal + """

            [[clients]]
            name = "a"
            token = "client-token-0123456789"

            [[clients]]
            name = "b"
            token = "client-token-0123456789"
            """
        expectRefusal(text, key: "clients[1].token", reason: "duplicate token")
    }

    @Test func clientWithoutNameOrToken() {
        expectRefusal(minimal + "[[clients]]\ntoken = \"client-token-0123456789\"\n", key: "clients[0].name", reason: "missing")
        expectRefusal(minimal + "[[clients]]\nname = \"a\"\n", key: "clients[0].token", reason: "missing")
    }

    @Test func clientReadsUnknownTable() throws {
        let text = minimal + "\n[[clients]]\nname = \"pos\"\ntoken = \"client-token-0123456789\"\nread = [\"orders\", \"invoices\"]\n"
        let error = try #require(expectRefusal(text, key: "clients[0].read[1]", reason: "unknown table 'invoices'"))
        #expect(error.line == line(containing: "read =", in: text))
    }

    @Test func clientWritesUnknownTable() {
        let text = minimal + "\n[[clients]]\nname = \"pos\"\ntoken = \"client-token-0123456789\"\nwrite = [\"Orders\"]\n"
        expectRefusal(text, key: "clients[0].write[0]", reason: "unknown table 'Orders'")
    }

    // Server and store

    @Test func badLogLevel() throws {
        let text = minimal + "\n[server]\nlog_level = \"verbose\"\n"
        let error = try #require(expectRefusal(text, key: "server.log_level", reason: "use one of"))
        #expect(error.reason.contains("trace, debug, info, notice, warning, error, critical"))
        #expect(error.line == line(containing: "log_level", in: text))
    }

    @Test(arguments: [65536, -1, 100_000])
    func portOutOfRange(_ port: Int) throws {
        let text = minimal + "\n[server]\nport = \(port)\n"
        let error = try #require(expectRefusal(text, key: "server.port", reason: "out of range"))
        #expect(error.reason.contains("0…65535"))
        #expect(error.line == line(containing: "port =", in: text))
    }

    @Test func otherRangeChecks() {
        expectRefusal(minimal + "[server]\nbacklog = 0\n", key: "server.backlog", reason: "out of range")
        expectRefusal(minimal + "[limits]\nmax_body_bytes = 1023\n", key: "limits.max_body_bytes", reason: "out of range")
        expectRefusal(
            minimal + "[limits]\nmax_rows_per_batch = 0\n", key: "limits.max_rows_per_batch", reason: "out of range")
        expectRefusal(minimal + "[limits]\nmax_page_rows = 100001\n", key: "limits.max_page_rows", reason: "out of range")
        expectRefusal(minimal + "[limits]\nmax_waiters = -1\n", key: "limits.max_waiters", reason: "out of range")
        expectRefusal(minimal + "[store]\nsync_piece_rows = 0\n", key: "store.sync_piece_rows", reason: "out of range")
        expectRefusal(minimal + "[store]\nmax_bytes = 4096\n", key: "store.max_bytes", reason: "under 1 MiB")
        expectRefusal(minimal + "[store]\nmax_bytes = -1\n", key: "store.max_bytes", reason: "out of range")
    }

    @Test func theReplicasSizeBound() throws {
        #expect(try parse(minimal).store.maxBytes == 0)
        #expect(try parse(minimal + "[store]\nmax_bytes = 8589934592\n").store.maxBytes == 8 << 30)
    }

    @Test func corsOrigins() throws {
        #expect(try parse(minimal).server.corsOrigins.isEmpty)
        let allowed = try parse(minimal + "[server]\ncors_origins = [\"https://pos.example\", \"http://10.0.0.7:3000\"]\n")
        #expect(allowed.server.corsOrigins == ["https://pos.example", "http://10.0.0.7:3000"])
        #expect(try parse(minimal + "[server]\ncors_origins = [\"*\"]\n").server.corsOrigins == ["*"])
        for bad in ["https://pos.example/", "https://pos.example/app", "pos.example", "ftp://pos.example"] {
            expectRefusal(minimal + "[server]\ncors_origins = [\"\(bad)\"]\n", key: "server.cors_origins", reason: "is not an origin")
        }
        expectRefusal(minimal + "[server]\ncors_origins = [\"*\", \"https://a.example\"]\n", key: "server.cors_origins", reason: "stands alone")
    }

    @Test func badSynchronousMode() {
        expectRefusal(minimal + "[store]\nsynchronous = \"off\"\n", key: "store.synchronous", reason: "use full or normal")
    }

    // Line numbers

    // ConfigFile.line(of:in:) knows the last key component and the array entry's block: when the
    // key is missing or its name is set in more than one place there, the error must carry no
    // line rather than a wrong one.

    @Test func missingClientTokenDoesNotPointAtTheAdminToken() throws {
        let text = minimal + "[[clients]]\nname = \"pos\"\n"
        let error = try #require(expectRefusal(text, key: "clients[0].token", reason: "missing"))
        let adminTokenLine = try #require(line(containing: "token =", in: text))
        #expect(error.line != adminTokenLine)
    }

    @Test func missingTableNameDoesNotPointAtAnotherTable() throws {
        let text = minimal + "[[tables]]\ncolumns = []\n"
        let error = try #require(expectRefusal(text, key: "tables[1].name", reason: "missing"))
        let firstTableNameLine = try #require(line(containing: "name = \"orders\"", in: text))
        #expect(error.line != firstTableNameLine)
    }

    @Test func inlineTableErrorDoesNotPointAtAnotherTable() throws {
        let text = minimal + """
            upload = { networks = ["bogus"] }

            [[tables]]
            name = "other"
            columns = []
            [tables.upload]
            networks = ["wired"]
            """
        let error = try #require(expectRefusal(text, key: "tables[0].upload.networks[0]", reason: "unknown network class"))
        let otherTableLine = try #require(line(containing: "networks = [\"wired\"]", in: text))
        #expect(error.line != otherTableLine)
    }

    @Test func lineNumberOfAKeyOnAKnownLine() throws {
        let text = """
            [admin]
            token = "admin-token-0123456789"

            [server]
            host = "localhost"
              port   = 99999
            """
        let error = try #require(configError(text))
        #expect(error.key == "server.port")
        #expect(error.line == 6)
        #expect(error.description == "dally.toml:6: server.port: 99999 is out of range 0…65535")
    }
}

// MARK: - ConfigFile.line(of:in:)

@Suite("ConfigFile.line(of:in:)")
struct ConfigFileLineTests {
    @Test func findsTheOnlyLineSettingTheKey() {
        let text = "[server]\nhost = \"x\"\n\tport=1\n"
        #expect(ConfigFile.line(of: "server.port", in: text) == 3)
        #expect(ConfigFile.line(of: "server.host", in: text) == 2)
    }

    @Test func findsTableHeaders() {
        let text = "a = 1\n[server]\n[[clients]]\n[tables.upload]\n"
        #expect(ConfigFile.line(of: "server", in: text) == 2)
        #expect(ConfigFile.line(of: "clients[0]", in: text) == 3)
        #expect(ConfigFile.line(of: "tables[0].upload", in: text) == 4)
    }

    @Test func indexSuffixIsIgnored() {
        let text = "[x]\ncolumns = [\"a\"]\n"
        #expect(ConfigFile.line(of: "tables[0].columns[3]", in: text) == 2)
    }

    @Test func ambiguousOrAbsentKeyHasNoLine() {
        #expect(ConfigFile.line(of: "name", in: "name = 1\nname = 2\n") == nil)
        #expect(ConfigFile.line(of: "port", in: "host = 1\n") == nil)
        #expect(ConfigFile.line(of: "", in: "a = 1\n") == nil)
    }

    /// Every `[[tables]]` entry sets `name`: the one at fault is found in its own block, its
    /// sub-tables included, up to the next entry or top-level table.
    @Test func aKeyOfAnArrayEntryIsFoundInThatEntrysBlock() {
        let text = """
            [[tables]]
            name = "a"
            [tables.upload]
            max_delay = "1m"
            [[tables]]
            name = "b c"
            [tables.upload]
            max_delay = "soon"
            [server]
            name = "x"
            """
        #expect(ConfigFile.line(of: "tables[1].name", in: text) == 6)
        #expect(ConfigFile.line(of: "tables[0].name", in: text) == 2)
        #expect(ConfigFile.line(of: "tables[1].upload.max_delay", in: text) == 8)
        // Beyond the entries written as headers: no line, not a wrong one.
        #expect(ConfigFile.line(of: "tables[2].name", in: text) == nil)
    }

    @Test func longerKeyWithTheSamePrefixDoesNotMatch() {
        let text = "max_waiters = 1\nmax_wait = \"1s\"\n"
        #expect(ConfigFile.line(of: "limits.max_wait", in: text) == 2)
        #expect(ConfigFile.line(of: "limits.max_waiters", in: text) == 1)
    }
}
