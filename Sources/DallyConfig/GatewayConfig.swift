import DallyCore

/// Everything `dally gateway` needs, read from one TOML file. Plain values: no TOML types
/// leak past ``GatewayConfig/load(path:)``.
public struct GatewayConfig: Sendable {
    public var server: Server
    public var store: Store
    public var limits: Limits
    public var adminToken: String
    public var clients: [ClientToken]
    /// Network classes, cheapest first.
    public var networkClasses: [String]
    public var tables: [TableSchema]

    public struct Server: Sendable {
        public var host = "127.0.0.1"
        public var port = 8080
        public var dataDirectory = "data/gateway"
        public var logLevel = "info"
        /// Pending-connection queue of the listening socket; bursts of long-polls need it deep.
        public var backlog = 4096

        public init() {}
    }

    public struct Store: Sendable {
        /// `full`: every commit reaches the disk before the client is answered (survives power
        /// loss). `normal`: survives a crash of the process but not of the machine.
        public var synchronousFull = true

        public init() {}
    }

    public struct Limits: Sendable {
        public var maxBodyBytes = 4 * 1024 * 1024
        public var maxRowsPerBatch = 10_000
        public var maxPageRows = 1_000
        /// 0 means: size from the open-files limit at start.
        public var maxWaiters = 0
        /// The longest `?wait=` honoured on the changes feeds; longer asks are cut to it.
        public var maxWait: Duration = .seconds(120)

        public init() {}
    }

    /// A local client's bearer token and the tables it may read and write (`*` for all).
    public struct ClientToken: Sendable {
        public var name: String
        public var token: String
        public var read: Set<String>
        public var write: Set<String>

        public func mayRead(_ table: String) -> Bool { read.contains("*") || read.contains(table) }
        public func mayWrite(_ table: String) -> Bool { write.contains("*") || write.contains(table) }
    }

    public static let defaultNetworkClasses = ["wired", "wifi", "cellular", "satellite"]
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    public init(
        server: Server = Server(),
        store: Store = Store(),
        limits: Limits = Limits(),
        adminToken: String,
        clients: [ClientToken],
        networkClasses: [String] = defaultNetworkClasses,
        tables: [TableSchema]
    ) {
        self.server = server
        self.store = store
        self.limits = limits
        self.adminToken = adminToken
        self.clients = clients
        self.networkClasses = networkClasses
        self.tables = tables
    }

    /// Reads and validates the file at `path`.
    ///
    /// - Throws: ``ConfigError`` naming the file, key, line (where known) and reason.
    public static func load(path: String) throws(ConfigError) -> GatewayConfig {
        try ConfigFile.read(path: path, parse: parse)
    }

    /// Validates a configuration given as TOML text; `file` names it in errors.
    public static func parse(text: String, file: String = "<config>") throws(ConfigError) -> GatewayConfig {
        try ConfigFile.parse(text: text, file: file, parse: parse)
    }

    static func parse(_ root: TOMLSection) throws(KeyError) -> GatewayConfig {
        try root.refuseUnknownKeys(["server", "store", "limits", "admin", "clients", "network", "tables"])

        var server = Server()
        if let section = try root.section("server") {
            try section.refuseUnknownKeys(["host", "port", "data_dir", "log_level", "backlog"])
            server.host = try section.string("host", default: server.host)
            server.port = try section.int("port", default: server.port, range: 0...65535)
            server.dataDirectory = try section.string("data_dir", default: server.dataDirectory)
            server.logLevel = try section.string("log_level", default: server.logLevel)
            guard logLevels.contains(server.logLevel) else {
                throw KeyError(key: "server.log_level", reason: "use one of \(logLevels.joined(separator: ", "))")
            }
            server.backlog = try section.int("backlog", default: server.backlog, range: 1...65535)
        }

        var store = Store()
        if let section = try root.section("store") {
            try section.refuseUnknownKeys(["synchronous"])
            switch try section.string("synchronous", default: "full") {
            case "full": store.synchronousFull = true
            case "normal": store.synchronousFull = false
            case let other: throw KeyError(key: "store.synchronous", reason: "'\(other)': use full or normal")
            }
        }

        var limits = Limits()
        if let section = try root.section("limits") {
            try section.refuseUnknownKeys([
                "max_body_bytes", "max_rows_per_batch", "max_page_rows", "max_waiters", "max_wait",
            ])
            limits.maxBodyBytes = try section.int("max_body_bytes", default: limits.maxBodyBytes, range: 1024...(1 << 30))
            limits.maxRowsPerBatch = try section.int(
                "max_rows_per_batch", default: limits.maxRowsPerBatch, range: 1...1_000_000)
            limits.maxPageRows = try section.int("max_page_rows", default: limits.maxPageRows, range: 1...100_000)
            limits.maxWaiters = try section.int("max_waiters", default: limits.maxWaiters, range: 0...1_000_000)
            limits.maxWait = try section.duration("max_wait", default: limits.maxWait, minimum: .seconds(1))
        }

        guard let admin = try root.section("admin") else {
            throw KeyError(key: "admin", reason: "missing: the [admin] table with a token for /stats and /metrics")
        }
        try admin.refuseUnknownKeys(["token"])
        guard let adminToken = try admin.string("token") else {
            throw KeyError(key: "admin.token", reason: "missing")
        }
        try checkToken(adminToken, key: "admin.token")

        var networkClasses = defaultNetworkClasses
        if let section = try root.section("network") {
            try section.refuseUnknownKeys(["classes"])
            networkClasses = try section.stringArray("classes") ?? networkClasses
            guard !networkClasses.isEmpty else { throw KeyError(key: "network.classes", reason: "declare at least one class") }
            for (i, name) in networkClasses.enumerated() {
                guard Identifier.isValidName(name) else {
                    throw KeyError(key: "network.classes[\(i)]", reason: "bad class name '\(name)'")
                }
                guard networkClasses.firstIndex(of: name) == i else {
                    throw KeyError(key: "network.classes[\(i)]", reason: "duplicate class '\(name)'")
                }
            }
        }

        let tables = try TableDeclarations.read(root, networkClasses: networkClasses)
        let tableNames = Set(tables.map(\.name))
        let clients = try readClients(root, tables: tableNames, adminToken: adminToken)
        return GatewayConfig(
            server: server, store: store, limits: limits, adminToken: adminToken, clients: clients,
            networkClasses: networkClasses, tables: tables
        )
    }

    static func readClients(_ root: TOMLSection, tables: Set<String>, adminToken: String) throws(KeyError) -> [ClientToken] {
        var clients: [ClientToken] = []
        for section in try root.sections("clients") {
            try section.refuseUnknownKeys(["name", "token", "read", "write"])
            guard let name = try section.string("name") else {
                throw KeyError(key: section.keyPath("name"), reason: "missing")
            }
            guard let token = try section.string("token") else {
                throw KeyError(key: section.keyPath("token"), reason: "missing")
            }
            try checkToken(token, key: section.keyPath("token"))
            guard token != adminToken, !clients.contains(where: { $0.token == token }) else {
                throw KeyError(key: section.keyPath("token"), reason: "duplicate token: every token must be distinct")
            }
            var rights: [Set<String>] = []
            for key in ["read", "write"] {
                let names = try section.stringArray(key) ?? []
                for (i, table) in names.enumerated() where table != "*" && !tables.contains(table) {
                    throw KeyError(key: "\(section.keyPath(key))[\(i)]", reason: "unknown table '\(table)'")
                }
                rights.append(Set(names))
            }
            clients.append(ClientToken(name: name, token: token, read: rights[0], write: rights[1]))
        }
        return clients
    }

    static func checkToken(_ token: String, key: String) throws(KeyError) {
        guard token.utf8.count >= 16, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw KeyError(key: key, reason: "a token needs at least 16 printable ASCII characters, no spaces")
        }
    }
}
