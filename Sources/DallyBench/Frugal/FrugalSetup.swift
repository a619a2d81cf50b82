import DallyCloud
import DallyConfig
import DallyFrugal
import DallyTestSupport
import Foundation
import Logging

/// The configurations of the frugality benchmark, made from its trace so they cannot drift
/// from it: one cloud that knows three gateways (Dally's, and the two baselines'), and Dally's
/// gateway with a wifi and a cellular uplink, each through its own counting relay.
enum FrugalSetup {
    static let edge = "edge"
    static let naive = "naive"
    static let periodic = "periodic"
    static let secret = "frugal-bench-secret-"
    static let clientToken = "frugal-bench-client-token"
    static let adminToken = "frugal-bench-admin-token"

    /// The cloud and its three gateways, with the trace's tables as the cloud declares them;
    /// loopback on a free port, quiet logs, an fsync per commit spared (the benchmark counts
    /// bytes, not durability).
    static func system(trace: FrugalTrace) -> SystemConfig {
        SystemConfig(
            tables: trace.tables.map { SystemConfig.Table($0.name, columns: $0.columns) },
            gateways: [edge, naive, periodic].map { .init(id: $0, secret: secret + $0) },
            clients: [.init(name: "devices", token: clientToken)],
            cloudAdminToken: adminToken, gatewayAdminToken: adminToken, loopbackAnyPort: true, synchronous: "normal")
    }

    static func cloud(directory: String, trace: FrugalTrace) throws -> CloudConfig {
        try system(trace: trace).cloud(dataDirectory: directory, file: "<frugal cloud>")
    }

    /// Dally's gateway: the trace's tables with their delays and networks, no notify long-poll
    /// and no periodic pulls (one gateway alone has nothing to pull: each would only cost a
    /// wake), no probes (the benchmark says when wifi is up), and `dictionaryBytes` per table.
    static func gateway(
        directory: String, trace: FrugalTrace, wifiPort: Int, cellularPort: Int, dictionaryBytes: Int, level: Int
    ) throws -> GatewayConfig {
        let tables = trace.tables.map { table in
            SystemConfig.Table(
                table.name, columns: table.columns,
                upload: TraceUploadPolicy(maxDelay: table.maxDelay, networks: table.networks).toml,
                download: #"{ period = "24h" }"#, uploadObjects: table.uploadObjects?.toml)
        }
        return try system(trace: trace).gateway(
            edge, dataDirectory: directory,
            link: .init(
                url: "http://127.0.0.1:\(wifiPort)", notifyNetworks: [], retryMin: "1s", retryMax: "10s", level: level,
                dictionaryBytes: dictionaryBytes),
            uplinks: [
                .init("wifi", class: "wifi", url: "http://127.0.0.1:\(wifiPort)"),
                .init("cellular", class: "cellular", url: "http://127.0.0.1:\(cellularPort)"),
            ],
            classes: ["wifi", "cellular"], tables: tables, file: "<frugal gateway>")
    }

    static func basicAuthorization(_ gateway: String) -> String {
        "Basic " + Data("\(gateway):\(secret)\(gateway)".utf8).base64EncodedString()
    }
}
