import DallyConfig

/// One cloud and its gateways, configured in one place: the tables both sides declare, the
/// gateways the cloud knows, the clients every gateway admits. It writes each server's TOML and
/// reads it back with the shipped parsers, so test and benchmark configurations are validated
/// exactly as a deployment's are.
///
/// What differs per test stays at the call site: the tables are an argument, and a gateway's
/// cloud link, uplinks and network classes are arguments of ``gateway(_:dataDirectory:link:uplinks:classes:extra:)``.
///
/// For example:
/// ```swift
/// let system = SystemConfig(
///     tables: [.init("orders", columns: ["customer TEXT", "total REAL"], conflict: "last_writer_wins")],
///     gateways: [.init(id: "gw-a", secret: "secret-of-gateway-a-0123")],
///     clients: [.init(name: "app", token: "test-client-token-0123456789")],
///     cloudAdminToken: "test-cloud-admin-0123456789", gatewayAdminToken: "test-gateway-admin-0123456789")
/// let cloud = try system.cloud(dataDirectory: root + "/cloud")
/// let gateway = try system.gateway("gw-a", dataDirectory: root + "/gw-a", link: .init(url: cloudURL))
/// ```
public struct SystemConfig: Sendable {
    public var tables: [Table]
    public var gateways: [Credential]
    public var clients: [Client]
    public var cloudAdminToken: String
    public var gatewayAdminToken: String
    public var logLevel: String
    /// `log_format`: `text` (the default) or `json`.
    public var logFormat = "text"
    /// `host = "127.0.0.1"`, `port = 0`: when false, the servers' defaults (tests pass the port
    /// to `services(port:)` instead).
    public var loopbackAnyPort: Bool
    /// `[store] synchronous` on every server; nil keeps the default.
    public var synchronous: String?

    public init(
        tables: [Table], gateways: [Credential], clients: [Client], cloudAdminToken: String,
        gatewayAdminToken: String, logLevel: String = "error", loopbackAnyPort: Bool = false,
        synchronous: String? = nil
    ) {
        self.tables = tables
        self.gateways = gateways
        self.clients = clients
        self.cloudAdminToken = cloudAdminToken
        self.gatewayAdminToken = gatewayAdminToken
        self.logLevel = logLevel
        self.loopbackAnyPort = loopbackAnyPort
        self.synchronous = synchronous
    }

    /// The secret gateway `id` authenticates with ("" for an unknown id).
    public func secret(of id: String) -> String {
        gateways.first { $0.id == id }?.secret ?? ""
    }

    /// The cloud's TOML: every gateway's credentials and every table; `extra` adds sections
    /// (`[limits]`, …) as written.
    public func cloudTOML(dataDirectory: String, extra: String = "") -> String {
        var lines = preamble(dataDirectory: dataDirectory, adminToken: cloudAdminToken)
        lines.append(extra)
        for gateway in gateways {
            lines += [
                "[[gateways]]", "id = \(TOMLText.string(gateway.id))", "secret = \(TOMLText.string(gateway.secret))",
            ]
        }
        lines += tables.map(\.toml)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The cloud's configuration, parsed from ``cloudTOML(dataDirectory:extra:)``.
    public func cloud(dataDirectory: String, extra: String = "", file: String = "<config>") throws -> CloudConfig {
        try CloudConfig.parse(text: cloudTOML(dataDirectory: dataDirectory, extra: extra), file: file)
    }

    /// Gateway `id`'s TOML: its cloud link (none: a gateway alone), its uplinks and network
    /// classes, every client and every table (`tables`, when given, instead of the system's);
    /// `extra` adds sections (`[limits]`, `[objects]`, …) as written.
    public func gatewayTOML(
        _ id: String, dataDirectory: String, link: CloudLink? = nil, uplinks: [Uplink] = [], classes: [String]? = nil,
        tables: [Table]? = nil, extra: String = ""
    ) -> String {
        var lines = preamble(dataDirectory: dataDirectory, adminToken: gatewayAdminToken)
        lines.append(extra)
        if let classes { lines += ["[network]", "classes = \(TOMLText.array(classes))"] }
        if let link { lines += link.toml(gatewayID: id, secret: secret(of: id)) }
        lines += uplinks.map(\.toml)
        lines += clients.map(\.toml)
        lines += (tables ?? self.tables).map(\.toml)
        return lines.joined(separator: "\n") + "\n"
    }

    /// Gateway `id`'s configuration, parsed from ``gatewayTOML(_:dataDirectory:link:uplinks:classes:tables:extra:)``.
    public func gateway(
        _ id: String, dataDirectory: String, link: CloudLink? = nil, uplinks: [Uplink] = [], classes: [String]? = nil,
        tables: [Table]? = nil, extra: String = "", file: String = "<config>"
    ) throws -> GatewayConfig {
        try GatewayConfig.parse(
            text: gatewayTOML(
                id, dataDirectory: dataDirectory, link: link, uplinks: uplinks, classes: classes, tables: tables,
                extra: extra),
            file: file)
    }

    private func preamble(dataDirectory: String, adminToken: String) -> [String] {
        var lines = ["[server]"]
        if loopbackAnyPort { lines += ["host = \"127.0.0.1\"", "port = 0"] }
        lines += ["data_dir = \(TOMLText.string(dataDirectory))", "log_level = \(TOMLText.string(logLevel))"]
        if logFormat != "text" { lines.append("log_format = \(TOMLText.string(logFormat))") }
        if let synchronous { lines += ["[store]", "synchronous = \(TOMLText.string(synchronous))"] }
        lines += ["[admin]", "token = \(TOMLText.string(adminToken))"]
        return lines
    }
}
