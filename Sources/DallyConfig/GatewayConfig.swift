import DallyCore

/// Everything `dally gateway` needs, read from one TOML file. Plain values: no TOML types
/// leak past ``GatewayConfig/load(path:)``.
public struct GatewayConfig: Sendable {
    /// `[server]`.
    public var server: Server
    /// `[store]`.
    public var store: Store
    /// `[limits]`.
    public var limits: Limits
    /// The bearer token for /stats and /metrics (`[admin] token`).
    public var adminToken: String
    /// The local clients' tokens (`[[clients]]`).
    public var clients: [ClientToken]
    /// Network classes, cheapest first.
    public var networkClasses: [String]
    /// The tables (`[[tables]]`).
    public var tables: [TableSchema]
    /// How to reach the cloud (`[cloud]`); nil when the section is absent and the gateway runs
    /// standalone.
    public var cloud: CloudLink?
    /// The ways to reach the cloud (`[[uplinks]]`). With `[cloud]` and no `[[uplinks]]`, one
    /// uplink named `default` of the cheapest class to `[cloud] url`; empty without `[cloud]`.
    public var uplinks: [UplinkConfig]
    /// `[objects]`.
    public var objects = ObjectSettings()

    /// `[server]`; see ``ServerSettings/gatewayDefaults`` for what is left out.
    public typealias Server = ServerSettings
    /// `[store]`.
    public typealias Store = StoreSettings

    /// `[limits]`: the most a request may ask of the gateway.
    public struct Limits: Sendable, Equatable, RequestLimits {
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
        /// The rows of each table the token is pinned to (`scope.<table> = { user_id = "u7" }`):
        /// it reads and writes only those, whatever it asks. A table not named here is whole.
        public var scopes: [String: RowScope] = [:]

        public init(name: String, token: String, read: Set<String>, write: Set<String>, scopes: [String: RowScope] = [:]) {
            self.name = name
            self.token = token
            self.read = read
            self.write = write
            self.scopes = scopes
        }

        public func mayRead(_ table: String) -> Bool { read.contains("*") || read.contains(table) }
        public func mayWrite(_ table: String) -> Bool { write.contains("*") || write.contains(table) }
    }

    /// The network classes when `[network]` does not declare them.
    public static let defaultNetworkClasses = ["wired", "wifi", "cellular", "satellite"]
    /// The accepted values of `server.log_level`.
    public static let logLevels = ServerSettings.logLevels

    public init(
        server: Server = .gatewayDefaults,
        store: Store = Store(),
        limits: Limits = Limits(),
        adminToken: String,
        clients: [ClientToken],
        networkClasses: [String] = defaultNetworkClasses,
        tables: [TableSchema],
        cloud: CloudLink? = nil,
        uplinks: [UplinkConfig] = []
    ) {
        self.server = server
        self.store = store
        self.limits = limits
        self.adminToken = adminToken
        self.clients = clients
        self.networkClasses = networkClasses
        self.tables = tables
        self.cloud = cloud
        self.uplinks = uplinks
    }

    /// The tables whose changes no uplink may carry: not local-only, yet none of their row
    /// upload networks is the class of a configured uplink. Their changes would wait in the
    /// outbox for ever, so the gateway warns about them at start. Empty without `[cloud]`.
    public func tablesWithoutUplink() -> [String] {
        guard cloud != nil else { return [] }
        let classes = Set(uplinks.map(\.networkClass))
        return tables.filter { table in
            !table.policy.localOnly && !table.policy.uploadRows.networks.contains(where: classes.contains)
        }.map(\.name)
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
        try root.refuseUnknownKeys(["server", "store", "limits", "admin", "clients", "network", "tables", "cloud", "uplinks", "objects"])
        let server = try ServerSettings.read(root, defaults: .gatewayDefaults, gateway: true)
        let store = try StoreSettings.read(root, gateway: true)
        var limits = Limits()
        _ = try limits.readShared(root, waiters: 0...1_000_000)
        let adminToken = try Secrets.readAdminToken(root)
        let networkClasses = try readNetworkClasses(root)
        let tables = try TableDeclarations.read(root, networkClasses: networkClasses)
        var tokens: Set<String> = [adminToken]
        let clients = try readClients(root, tables: tables, tokens: &tokens)
        let cloud = try CloudLink.read(root, otherTokens: tokens, networkClasses: networkClasses)
        let uplinks = try UplinkConfig.read(root, cloud: cloud, networkClasses: networkClasses)
        var config = GatewayConfig(
            server: server, store: store, limits: limits, adminToken: adminToken, clients: clients,
            networkClasses: networkClasses, tables: tables, cloud: cloud, uplinks: uplinks
        )
        config.objects = try ObjectSettings.read(root, gateway: true)
        return config
    }

    static func readNetworkClasses(_ root: TOMLSection) throws(KeyError) -> [String] {
        guard let section = try root.section("network") else { return defaultNetworkClasses }
        try section.refuseUnknownKeys(["classes"])
        let networkClasses = try section.stringArray("classes") ?? defaultNetworkClasses
        guard !networkClasses.isEmpty else { throw KeyError(key: "network.classes", reason: "declare at least one class") }
        for (i, name) in networkClasses.enumerated() {
            guard Identifier.isValidName(name) else {
                throw KeyError(key: "network.classes[\(i)]", reason: "bad class name '\(name)'")
            }
            guard networkClasses.firstIndex(of: name) == i else {
                throw KeyError(key: "network.classes[\(i)]", reason: "duplicate class '\(name)'")
            }
        }
        return networkClasses
    }

    /// Reads `[[clients]]`; every token must be missing from `tokens`, and is added to it.
    static func readClients(
        _ root: TOMLSection, tables schemas: [TableSchema], tokens: inout Set<String>
    ) throws(KeyError) -> [ClientToken] {
        let tables = Set(schemas.map(\.name))
        var clients: [ClientToken] = []
        for section in try root.sections("clients") {
            try section.refuseUnknownKeys(["name", "token", "read", "write", "scope"])
            let name = try section.requiredString("name")
            let token = try Secrets.readDistinct(section, "token", taken: &tokens)
            var rights: [Set<String>] = []
            for key in ["read", "write"] {
                let names = try section.stringArray(key) ?? []
                for (i, table) in names.enumerated() where table != "*" && !tables.contains(table) {
                    throw KeyError(key: "\(section.keyPath(key))[\(i)]", reason: "unknown table '\(table)'")
                }
                rights.append(Set(names))
            }
            let scopes = try ScopeDeclaration.readClientScopes(section, schemas: schemas)
            clients.append(ClientToken(name: name, token: token, read: rights[0], write: rights[1], scopes: scopes))
        }
        return clients
    }
}
