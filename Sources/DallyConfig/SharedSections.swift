import Foundation
import DallyCore

/// The `[server]` section: where a server listens, where it keeps its data and how much it
/// logs. The gateway and the cloud read it the same way; only the defaults differ
/// (``gatewayDefaults``, ``cloudDefaults``).
public struct ServerSettings: Sendable, Equatable {

    /// The address to listen on; `"0.0.0.0"` for every interface.
    public var host: String
    /// The TCP port; 0 lets the system pick a free one.
    public var port: Int
    /// The directory holding the server's data (created if missing).
    public var dataDirectory: String
    /// One of ``logLevels``.
    public var logLevel: String
    /// How log lines are written to standard error: one of ``logFormats``.
    public var logFormat = "text"
    /// Pending-connection queue of the listening socket; bursts of long-polls need it deep.
    public var backlog: Int
    /// How long a connection may stay with no request under way (idle between requests, or
    /// with a request head that never completes) before it is closed: above the 60 s that
    /// clients keep pooled connections (the gateway's uplinks, curl, browsers), so that the
    /// server is not the one to close a connection a client is about to reuse.
    public var keepaliveTimeout: Duration = .seconds(75)
    /// How long a request's body may stop coming (no byte of it) before the request is
    /// answered `408 body_timeout` and its connection closed: nginx's `client_body_timeout`.
    /// Each byte restarts it, so a slow link that keeps moving is never cut.
    public var bodyTimeout: Duration = .seconds(60)
    /// `tls_cert` and `tls_key`: PEM paths of the server's certificate chain and private key;
    /// nil serves plain HTTP. Reloaded on SIGHUP.
    public var tls: CertificateFiles?
    /// `tls_client_ca`: PEM path of the CA whose certificates clients must present (mutual
    /// TLS; the cloud's gateways then prove themselves twice: certificate and secret).
    public var tlsClientCA: String?
    /// Gateway only, `cors_origins`: the web origins (`https://pos.example`, or `*` for any)
    /// whose pages may call the local API from a browser (CORS). Empty: none, and browsers
    /// keep other origins' pages out, as before.
    public var corsOrigins: [String] = []

    public init(host: String = "127.0.0.1", port: Int, dataDirectory: String, logLevel: String = "info", backlog: Int) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.logLevel = logLevel
        self.backlog = backlog
    }

    /// What `dally gateway` uses for keys its file leaves out.
    public static let gatewayDefaults = ServerSettings(port: 8080, dataDirectory: "data/gateway", backlog: 4096)
    /// What `dally cloud` uses for keys its file leaves out.
    public static let cloudDefaults = ServerSettings(port: 8090, dataDirectory: "data/cloud", backlog: 1024)
    /// The accepted values of `log_format`: `text` for people, `json` (one object per line:
    /// time, level, label, message, then the metadata as fields) for log collectors.
    public static let logFormats = ["text", "json"]
    /// The accepted values of `log_level`, most verbose first.
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// Reads `[server]` from `root`, taking what it leaves out from `defaults`; `cors_origins`
    /// only for a gateway (`gateway`), the cloud's API being for gateways, not browsers.
    static func read(_ root: TOMLSection, defaults: ServerSettings, gateway: Bool = false) throws(KeyError) -> ServerSettings {
        var server = defaults
        guard let section = try root.section("server") else { return server }
        try section.refuseUnknownKeys(
            [
                "host", "port", "data_dir", "log_level", "log_format", "backlog", "keepalive_timeout", "body_timeout",
                "tls_cert", "tls_key", "tls_client_ca",
            ] + (gateway ? ["cors_origins"] : []))
        server.host = try section.string("host", default: server.host)
        server.port = try section.int("port", default: server.port, range: 0...65535)
        server.dataDirectory = try section.string("data_dir", default: server.dataDirectory)
        server.logLevel = try section.string("log_level", default: server.logLevel)
        guard logLevels.contains(server.logLevel) else {
            throw KeyError(key: "server.log_level", reason: "use one of \(logLevels.joined(separator: ", "))")
        }
        server.logFormat = try section.string("log_format", default: server.logFormat)
        guard logFormats.contains(server.logFormat) else {
            throw KeyError(key: "server.log_format", reason: "use one of \(logFormats.joined(separator: ", "))")
        }
        server.backlog = try section.int("backlog", default: server.backlog, range: 1...65535)
        server.keepaliveTimeout = try section.duration(
            "keepalive_timeout", default: server.keepaliveTimeout, minimum: .seconds(1), maximum: .seconds(3_600))
        server.bodyTimeout = try section.duration(
            "body_timeout", default: server.bodyTimeout, minimum: .seconds(1), maximum: .seconds(3_600))
        server.tls = try TLSFiles.pair(section, "tls_cert", "tls_key")
        server.tlsClientCA = try TLSFiles.path(section, "tls_client_ca")
        if server.tlsClientCA != nil, server.tls == nil {
            throw KeyError(key: section.keyPath("tls_client_ca"), reason: "needs tls_cert and tls_key: client certificates are asked for over TLS")
        }
        if gateway { server.corsOrigins = try corsOrigins(section) }
        return server
    }

    /// `cors_origins`: `["*"]` alone, or origins as a browser sends them in `Origin`: a scheme,
    /// a host and maybe a port, nothing after (`https://pos.example:8443`).
    private static func corsOrigins(_ section: TOMLSection) throws(KeyError) -> [String] {
        let key = section.keyPath("cors_origins")
        let origins = try section.stringArray("cors_origins") ?? []
        if origins.contains("*") {
            guard origins.count == 1 else { throw KeyError(key: key, reason: "\"*\" (any origin) stands alone") }
            return origins
        }
        for origin in origins {
            guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme),
                url.host != nil, url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil,
                !origin.hasSuffix("/")
            else {
                throw KeyError(
                    key: key,
                    reason: "'\(origin)' is not an origin: write it as a browser sends it, scheme://host[:port] with no path (https://pos.example), or \"*\" for any")
            }
        }
        return origins
    }
}

/// The `[store]` section: how durable a commit is before it is answered.
public struct StoreSettings: Sendable, Equatable {
    /// `full`: every commit reaches the disk before the client is answered (survives power
    /// loss). `normal`: survives a crash of the process but not of the machine.
    public var synchronousFull: Bool
    /// Gateway only: the most rows one sync transaction applies (an answer's or a page's), so
    /// that local writes wait at most that long behind sync work. Smaller keeps local writes
    /// faster; larger drains a backlog with fewer commits.
    public var syncPieceRows: Int
    /// Cloud only: which store holds the primary copy (`backend`, `url`, `password_env`,
    /// `pool_size`). `synchronous` applies to SQLite only.
    public var backend: StoreBackend = .sqlite
    /// How often upkeep purges old tombstones (and, at a gateway, removes retained rows):
    /// `compact_interval`, default one hour, the first pass one interval after start.
    public var compactInterval: Duration = .seconds(3600)
    /// Gateway only: local writes are refused (`507 insufficient_storage`) while the data
    /// directory's filesystem has less free than this (`min_free_bytes`, default 64 MiB; 0 off).
    public var minFreeBytes: Int64 = 64 << 20
    /// Gateway only: local writes are refused (`507 insufficient_storage`) while the replica's
    /// files take this many bytes or more (`max_bytes`; default 0, no bound).
    public var maxBytes: Int64 = 0

    /// Rows per sync transaction unless configured.
    public static let defaultSyncPieceRows = 256

    public init(synchronousFull: Bool = true, syncPieceRows: Int = StoreSettings.defaultSyncPieceRows) {
        self.synchronousFull = synchronousFull
        self.syncPieceRows = syncPieceRows
    }

    /// Reads `[store]` from `root`; `synchronous` defaults to `full`. `sync_piece_rows` is a
    /// gateway key (`gateway`), refused as unknown in the cloud's file; the backend keys are
    /// the cloud's, refused in the gateway's. `environment` supplies `password_env`'s variable.
    static func read(
        _ root: TOMLSection, gateway: Bool = false,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(KeyError) -> StoreSettings {
        var store = StoreSettings()
        guard let section = try root.section("store") else { return store }
        try section.refuseUnknownKeys(
            gateway
                ? ["synchronous", "sync_piece_rows", "compact_interval", "min_free_bytes", "max_bytes"]
                : ["synchronous", "backend", "url", "password_env", "pool_size", "compact_interval"])
        store.compactInterval = try section.duration("compact_interval", default: store.compactInterval, minimum: .seconds(1))
        if !gateway { store.backend = try readBackend(section, environment: environment) }
        if gateway {
            store.minFreeBytes = Int64(
                try section.int("min_free_bytes", default: Int(store.minFreeBytes), range: 0...(1 << 50)))
            store.maxBytes = Int64(try section.int("max_bytes", default: 0, range: 0...(1 << 50)))
            if store.maxBytes > 0, store.maxBytes < 1 << 20 {
                throw KeyError(key: "store.max_bytes", reason: "\(store.maxBytes) is under 1 MiB (1048576): the replica's schema alone takes most of that; use 0 for no bound")
            }
            store.syncPieceRows = try section.int(
                "sync_piece_rows", default: StoreSettings.defaultSyncPieceRows, range: 1...100_000)
        }
        switch try section.string("synchronous", default: "full") {
        case "full": store.synchronousFull = true
        case "normal": store.synchronousFull = false
        case let other: throw KeyError(key: "store.synchronous", reason: "'\(other)': use full or normal")
        }
        return store
    }

    private static func readBackend(_ section: TOMLSection, environment: [String: String]) throws(KeyError)
        -> StoreBackend
    {
        switch try section.string("backend", default: "sqlite") {
        case "sqlite":
            for key in ["url", "password_env", "pool_size"] where section.has(key) {
                throw KeyError(key: section.keyPath(key), reason: "only used with backend = \"postgresql\"")
            }
            return .sqlite
        case "postgresql":
            let url = try section.requiredString(
                "url", reason: "missing: backend = \"postgresql\" needs url = \"postgres://user@host:port/database\"")
            var settings = try PostgresSettings.parse(url: url, key: section.keyPath("url"))
            if let variable = try section.string("password_env") {
                guard settings.password == nil else {
                    throw KeyError(
                        key: section.keyPath("password_env"),
                        reason: "the url has a password already; give it in one place (the environment is safer)")
                }
                guard let password = environment[variable], !password.isEmpty else {
                    throw KeyError(
                        key: section.keyPath("password_env"),
                        reason: "the environment variable \(variable) is not set or empty; set it to the database password")
                }
                settings.password = password
            }
            settings.poolSize = try section.int("pool_size", default: PostgresSettings.defaultPoolSize, range: 1...1000)
            return .postgresql(settings)
        case let other:
            throw KeyError(key: section.keyPath("backend"), reason: "'\(other)': use sqlite or postgresql")
        }
    }
}

/// The `[limits]` keys that the gateway and the cloud share, so that one function reads them.
protocol RequestLimits {
    var maxBodyBytes: Int { get set }
    var maxRowsPerBatch: Int { get set }
    var maxPageRows: Int { get set }
    var maxWaiters: Int { get set }
    var maxWait: Duration { get set }
}

extension RequestLimits {
    /// Reads the shared keys of `[limits]` onto `self`, refusing keys that are neither shared
    /// nor in `extraKeys`. Returns the section, when present, for the caller's own keys.
    mutating func readShared(
        _ root: TOMLSection, waiters: ClosedRange<Int>, extraKeys: [String] = []
    ) throws(KeyError) -> TOMLSection? {
        guard let section = try root.section("limits") else { return nil }
        try section.refuseUnknownKeys(
            ["max_body_bytes"] + extraKeys + ["max_rows_per_batch", "max_page_rows", "max_waiters", "max_wait"])
        maxBodyBytes = try section.int("max_body_bytes", default: maxBodyBytes, range: 1024...(1 << 30))
        maxRowsPerBatch = try section.int("max_rows_per_batch", default: maxRowsPerBatch, range: 1...1_000_000)
        maxPageRows = try section.int("max_page_rows", default: maxPageRows, range: 1...100_000)
        maxWaiters = try section.int("max_waiters", default: maxWaiters, range: waiters)
        maxWait = try section.duration("max_wait", default: maxWait, minimum: .seconds(1))
        return section
    }
}

/// Bearer tokens and shared secrets: the rule they follow, and the check that no two are alike.
enum Secrets {
    static let rule = "a token needs at least 16 printable ASCII characters, no spaces"

    /// Refuses a token shorter than 16 bytes or with anything but printable ASCII.
    static func check(_ token: String, key: String) throws(KeyError) {
        guard token.utf8.count >= 16, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw KeyError(key: key, reason: rule)
        }
    }

    /// Reads the required token `key` of `section`, checks it, and refuses it when it is in
    /// `taken`; on success adds it there.
    static func readDistinct(_ section: TOMLSection, _ key: String, taken: inout Set<String>) throws(KeyError) -> String {
        let token = try section.requiredString(key)
        try check(token, key: section.keyPath(key))
        guard taken.insert(token).inserted else {
            throw KeyError(key: section.keyPath(key), reason: "duplicate \(key): every token and secret must be distinct")
        }
        return token
    }

    /// Reads the token `key` of `section` when it is there (checked and distinct as
    /// ``readDistinct(_:_:taken:)``); nil when it is absent.
    static func readOptionalDistinct(_ section: TOMLSection, _ key: String, taken: inout Set<String>) throws(KeyError)
        -> String?
    {
        guard section.table[key] != nil else { return nil }
        return try readDistinct(section, key, taken: &taken)
    }

    /// Reads the required `[admin]` table and its `token`, the bearer token for /stats and /metrics.
    static func readAdminToken(_ root: TOMLSection) throws(KeyError) -> String {
        guard let admin = try root.section("admin") else {
            throw KeyError(key: "admin", reason: "missing: the [admin] table with a token for /stats and /metrics")
        }
        try admin.refuseUnknownKeys(["token"])
        var none: Set<String> = []
        return try readDistinct(admin, "token", taken: &none)
    }
}
