import DallyConfig
import Foundation

/// The configurations the bench commands run with, written as TOML and read by the same
/// parsers as the shipped files, so that they are validated the same way. Every server binds
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

    private static func tableBlock(_ columns: [String]) -> String {
        """
        [[tables]]
        name = "\(table)"
        columns = [\(columns.map { "\"\($0)\"" }.joined(separator: ", "))]
        conflict = "last_writer_wins"
        """
    }

    /// A cloud that knows `gateways` gateways (``gatewayID(_:)`` with ``secret(_:)``).
    static func cloud(
        directory: String, gateways: Int, columns: [String], synchronousFull: Bool, maxRowsPerBatch: Int = 10_000,
        logLevel: String
    ) throws -> CloudConfig {
        let credentials = (0..<gateways).map { n in
            "[[gateways]]\nid = \"\(gatewayID(n))\"\nsecret = \"\(secret(n))\""
        }
        return try CloudConfig.parse(
            text: """
                [server]
                host = "127.0.0.1"
                port = 0
                data_dir = "\(directory)"
                log_level = "\(logLevel)"
                [store]
                synchronous = "\(synchronousFull ? "full" : "normal")"
                [limits]
                max_body_bytes = \(1 << 28)
                max_decompressed_bytes = \(1 << 30)
                max_rows_per_batch = \(max(10_000, maxRowsPerBatch))
                [admin]
                token = "\(cloudAdminToken)"
                \(credentials.joined(separator: "\n"))
                \(tableBlock(columns))
                """,
            file: "<bench cloud>")
    }

    /// Gateway `n`, syncing with the cloud on `cloudPort` only when asked (sync-now) or told
    /// (notify), with the client token ``clientToken``.
    static func gateway(
        _ n: Int, directory: String, cloudPort: Int, columns: [String], synchronousFull: Bool, logLevel: String
    ) throws -> GatewayConfig {
        try GatewayConfig.parse(
            text: """
                [server]
                host = "127.0.0.1"
                port = 0
                data_dir = "\(directory)"
                log_level = "\(logLevel)"
                [store]
                synchronous = "\(synchronousFull ? "full" : "normal")"
                [admin]
                token = "\(gatewayAdminToken)"
                [[clients]]
                name = "bench"
                token = "\(clientToken)"
                read = ["*"]
                write = ["*"]
                [cloud]
                url = "http://127.0.0.1:\(cloudPort)"
                gateway_id = "\(gatewayID(n))"
                secret = "\(secret(n))"
                notify_wait = "60s"
                retry_min = "50ms"
                retry_max = "1s"
                \(tableBlock(columns))
                """,
            file: "<bench gateway \(n + 1)>")
    }
}
