import DallyConfig
import DallyTestSupport
import Foundation

/// The configurations the bench commands run with, written by ``SystemConfig`` as TOML and read
/// by the same parsers as the shipped files, so that they are validated the same way. Every server binds
/// port 0 (a free port) on 127.0.0.1 and keeps its data in a temporary directory.
enum BenchConfigs {
    static let clientToken = "bench-client-token-0123456789"
    static let cloudAdminToken = "bench-cloud-admin-token-0123456789"
    static let gatewayAdminToken = "bench-gateway-admin-token-0123456789"
    /// The table every bench writes to.
    static let table = "orders"
    /// The columns of `orders` in `config/gateway.toml` and `config/cloud.toml`.
    static let orderColumns = ["customer TEXT", "total REAL", "paid BOOLEAN", "items JSON"]

    static func gatewayID(_ n: Int) -> String { "bench-gw-\(n + 1)" }
    static func secret(_ n: Int) -> String { "bench-gateway-\(n + 1)-secret-0123456789" }
    static func replicaID(_ n: Int) -> String { "bench-replica-\(n + 1)" }

    /// `--columns "customer TEXT,total REAL"` → `["customer TEXT", "total REAL"]`.
    ///
    /// - Throws: when a declaration holds anything but letters, digits, `_` and one space (the
    ///   configuration parser checks names and types).
    static func columns(_ text: String) throws -> [String] {
        let declarations = text.split(separator: ",").map { $0.split(separator: " ").joined(separator: " ") }
        for declaration in declarations {
            let allowed = declaration.unicodeScalars.allSatisfy {
                $0 == " " || $0 == "_" || ($0.isASCII && CharacterSet.alphanumerics.contains($0))
            }
            guard allowed, !declaration.isEmpty else {
                throw BenchError("--columns: '\(declaration)' is not \"name TYPE\"")
            }
            if declaration.uppercased().hasSuffix(" OBJECT") {
                throw BenchError("--columns: OBJECT columns are written through the objects API, not in batches")
            }
        }
        guard !declarations.isEmpty else { throw BenchError("--columns: declare at least one column") }
        return declarations
    }

    /// The bench system: `orders` with `columns`, a cloud that knows `gateways` gateways
    /// (``gatewayID(_:)`` with ``secret(_:)``), every server on 127.0.0.1 at a free port.
    static func system(gateways: Int, columns: [String], synchronousFull: Bool, logLevel: String) -> SystemConfig {
        SystemConfig(
            tables: [.init(table, columns: columns, conflict: "last_writer_wins")],
            gateways: (0..<gateways).map { .init(id: gatewayID($0), secret: secret($0)) },
            clients: [.init(name: "bench", token: clientToken)],
            cloudAdminToken: cloudAdminToken, gatewayAdminToken: gatewayAdminToken, logLevel: logLevel,
            loopbackAnyPort: true, synchronous: synchronousFull ? "full" : "normal")
    }

    /// A cloud that knows `gateways` gateways (``gatewayID(_:)`` with ``secret(_:)``).
    static func cloud(
        directory: String, gateways: Int, columns: [String], synchronousFull: Bool, maxRowsPerBatch: Int = 10_000,
        logLevel: String
    ) throws -> CloudConfig {
        try system(gateways: gateways, columns: columns, synchronousFull: synchronousFull, logLevel: logLevel).cloud(
            dataDirectory: directory,
            extra: """
                [limits]
                max_body_bytes = \(1 << 28)
                max_decompressed_bytes = \(1 << 30)
                max_rows_per_batch = \(max(10_000, maxRowsPerBatch))
                """,
            file: "<bench cloud>")
    }

    /// Gateway `n`, syncing with the cloud on `cloudPort` only when asked (sync-now) or told
    /// (notify), with the client token ``clientToken``.
    static func gateway(
        _ n: Int, directory: String, cloudPort: Int, columns: [String], synchronousFull: Bool, logLevel: String
    ) throws -> GatewayConfig {
        try system(gateways: n + 1, columns: columns, synchronousFull: synchronousFull, logLevel: logLevel).gateway(
            gatewayID(n), dataDirectory: directory,
            link: .init(url: "http://127.0.0.1:\(cloudPort)", notifyWait: "60s", retryMin: "50ms", retryMax: "1s"),
            file: "<bench gateway \(n + 1)>")
    }
}
