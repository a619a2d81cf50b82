import DallyCore
import Foundation

/// Everything `dally cloud` needs, read from one TOML file. Plain values: no TOML types leak
/// past ``CloudConfig/load(path:)``.
public struct CloudConfig: Sendable {
    /// `[server]`; see ``ServerSettings/cloudDefaults`` for what is left out.
    public var server: Server
    /// `[store]`.
    public var store: Store
    /// `[limits]`.
    public var limits: Limits
    /// How long a batch's answer is kept, so that a gateway retrying the batch gets the same
    /// answer rather than applying it twice (`[batches] keep_answers`).
    public var keepAnswers: Duration
    /// How far past the cloud's clock a change's `updated_at` may be; a later one is taken as
    /// stamped when it arrived (`[batches] max_clock_ahead`).
    public var maxClockAhead: Duration = defaultMaxClockAhead
    /// The bearer token for /stats and /metrics (`[admin] token`).
    public var adminToken: String
    /// The gateways allowed to sync, at least one (`[[gateways]]`).
    public var gateways: [GatewayCredential]
    /// The tables, declared exactly as on the gateways (`[[tables]]`).
    public var tables: [TableSchema]
    /// `[objects]`.
    public var objects = ObjectSettings()

    /// `[server]`, shared with the gateway.
    public typealias Server = ServerSettings
    /// `[store]`, shared with the gateway.
    public typealias Store = StoreSettings

    /// `[limits]`: the most a request may ask of the cloud.
    public struct Limits: Sendable, Equatable, RequestLimits {
        /// The largest request body as sent, compressed or not.
        public var maxBodyBytes = 8 * 1024 * 1024
        /// The largest request body once decompressed; at least ``maxBodyBytes``.
        public var maxDecompressedBytes = 64 * 1024 * 1024
        /// The most rows in one uploaded batch.
        public var maxRowsPerBatch = 10_000
        /// The most rows in one downstream page.
        public var maxPageRows = 1_000
        /// The most notify long-polls held at once.
        public var maxWaiters = 10_000
        /// The longest notify wait honoured; longer asks are cut to it.
        public var maxWait: Duration = .seconds(120)
        /// The most compression dictionaries one gateway may keep in the cloud.
        public var maxDictionaries = 32
        /// The largest dictionary accepted.
        public var maxDictionaryBytes = 112 * 1024

        public init() {}
    }

    /// The default of ``keepAnswers``: a week.
    public static let defaultKeepAnswers: Duration = .seconds(7 * 86_400)
    /// The default of ``maxClockAhead``: a minute, well past a clock kept by NTP.
    public static let defaultMaxClockAhead: Duration = .seconds(60)

    public init(
        server: Server = .cloudDefaults,
        store: Store = Store(),
        limits: Limits = Limits(),
        keepAnswers: Duration = defaultKeepAnswers,
        adminToken: String,
        gateways: [GatewayCredential],
        tables: [TableSchema]
    ) {
        self.server = server
        self.store = store
        self.limits = limits
        self.keepAnswers = keepAnswers
        self.adminToken = adminToken
        self.gateways = gateways
        self.tables = tables
    }

    /// Reads and validates the file at `path`.
    ///
    /// - Throws: ``ConfigError`` naming the file, key, line (where known) and reason.
    public static func load(path: String) throws(ConfigError) -> CloudConfig {
        try ConfigFile.read(path: path) { root throws(KeyError) in try parse(root) }
    }

    /// Validates a configuration given as TOML text; `file` names it in errors.
    /// - Parameter environment: where `[store] password_env` is looked up (the process's
    ///   environment unless given: tests pass their own rather than change the process's,
    ///   which other threads read).
    public static func parse(
        text: String, file: String = "<config>", environment: [String: String]
    ) throws(ConfigError) -> CloudConfig {
        try ConfigFile.parse(text: text, file: file) { root throws(KeyError) in try parse(root, environment: environment) }
    }

    public static func parse(text: String, file: String = "<config>") throws(ConfigError) -> CloudConfig {
        try parse(text: text, file: file, environment: ProcessInfo.processInfo.environment)
    }

    static func parse(
        _ root: TOMLSection, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(KeyError) -> CloudConfig {
        try root.refuseUnknownKeys(["server", "store", "limits", "batches", "admin", "gateways", "tables", "objects"])
        let server = try ServerSettings.read(root, defaults: .cloudDefaults)
        let store = try StoreSettings.read(root, environment: environment)
        var limits = Limits()
        if let section = try limits.readShared(
            root, waiters: 1...1_000_000,
            extraKeys: ["max_decompressed_bytes", "max_dictionaries", "max_dictionary_bytes"])
        {
            limits.maxDecompressedBytes = try section.int(
                "max_decompressed_bytes", default: limits.maxDecompressedBytes, range: 1024...(1 << 34))
            limits.maxDictionaries = try section.int("max_dictionaries", default: limits.maxDictionaries, range: 0...1024)
            limits.maxDictionaryBytes = try section.int(
                "max_dictionary_bytes", default: limits.maxDictionaryBytes, range: 1024...(1 << 24))
        }
        guard limits.maxDecompressedBytes >= limits.maxBodyBytes else {
            throw KeyError(
                key: "limits.max_decompressed_bytes",
                reason: "must be at least max_body_bytes (\(limits.maxBodyBytes))"
            )
        }

        var keepAnswers = defaultKeepAnswers
        var maxClockAhead = defaultMaxClockAhead
        if let section = try root.section("batches") {
            try section.refuseUnknownKeys(["keep_answers", "max_clock_ahead"])
            keepAnswers = try section.duration("keep_answers", default: keepAnswers, minimum: .seconds(60))
            maxClockAhead = try section.duration("max_clock_ahead", default: maxClockAhead, minimum: .seconds(1))
        }

        let adminToken = try Secrets.readAdminToken(root)
        var tokens: Set<String> = [adminToken]
        let gateways = try readGateways(root, tokens: &tokens, certificates: server.tlsClientCA != nil)
        let tables = try TableDeclarations.read(root, networkClasses: nil)
        var config = CloudConfig(
            server: server, store: store, limits: limits, keepAnswers: keepAnswers, adminToken: adminToken,
            gateways: gateways, tables: tables
        )
        config.objects = try ObjectSettings.read(root, gateway: false)
        config.maxClockAhead = maxClockAhead
        return config
    }

    /// Reads `[[gateways]]`: at least one, ids distinct (ignoring case), secrets missing from
    /// `tokens` and added to it. A gateway may go without a secret only when `certificates`
    /// (`[server] tls_client_ca`): its client certificate then proves its id.
    static func readGateways(_ root: TOMLSection, tokens: inout Set<String>, certificates: Bool) throws(KeyError)
        -> [GatewayCredential]
    {
        var gateways: [GatewayCredential] = []
        var ids: Set<String> = []
        for section in try root.sections("gateways") {
            try section.refuseUnknownKeys(["id", "secret"])
            let id = try section.requiredString("id")
            try GatewayCredential.checkID(id, key: section.keyPath("id"))
            guard ids.insert(id.lowercased()).inserted else {
                throw KeyError(key: section.keyPath("id"), reason: "duplicate gateway id '\(id)'")
            }
            let secret: String?
            if certificates {
                secret = try Secrets.readOptionalDistinct(section, "secret", taken: &tokens)
            } else {
                secret = try Secrets.readDistinct(section, "secret", taken: &tokens)
            }
            gateways.append(GatewayCredential(id: id, secret: secret))
        }
        guard !gateways.isEmpty else {
            throw KeyError(key: "gateways", reason: "missing: declare at least one [[gateways]] with an id and a secret")
        }
        return gateways
    }
}

/// A gateway allowed to sync with the cloud: its id and the secret it proves it with.
public struct GatewayCredential: Sendable, Equatable {
    /// The gateway's id; see ``isValidID(_:)``. With client certificates (`tls_client_ca`), a
    /// gateway's certificate must name it as its common name.
    public var id: String
    /// The shared secret; the gateway's `[cloud] secret` holds the same. Nil: the gateway
    /// proves its id with its client certificate alone.
    public var secret: String?

    public init(id: String, secret: String?) {
        self.id = id
        self.secret = secret
    }

    /// The longest id accepted.
    public static let maxIDLength = 63

    /// Whether `id` is a valid gateway id: 1 to 63 ASCII letters, digits, `_` or `-`.
    public static func isValidID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= maxIDLength else { return false }
        return bytes.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    static func checkID(_ id: String, key: String) throws(KeyError) {
        guard isValidID(id) else {
            throw KeyError(key: key, reason: "bad gateway id '\(id)': use 1 to \(maxIDLength) letters, digits, _ or -")
        }
    }
}
