import DallyCloud
import DallyConfig
import DallyFrugal
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

    static func cloud(directory: String, trace: FrugalTrace) throws -> CloudConfig {
        let gateways = [edge, naive, periodic].map { "[[gateways]]\nid = \"\($0)\"\nsecret = \"\(secret)\($0)\"" }
        let tables = trace.tables.map { table in
            "[[tables]]\nname = \"\(table.name)\"\ncolumns = [\(table.columns.map { "\"\($0)\"" }.joined(separator: ", "))]"
        }
        return try CloudConfig.parse(
            text: """
                \(preamble(directory))
                \(gateways.joined(separator: "\n"))
                \(tables.joined(separator: "\n"))
                """,
            file: "<frugal cloud>")
    }

    /// Dally's gateway: the trace's tables with their delays and networks, no notify long-poll
    /// and no periodic pulls (one gateway alone has nothing to pull: each would only cost a
    /// wake), no probes (the benchmark says when wifi is up), and `dictionaryBytes` per table.
    static func gateway(
        directory: String, trace: FrugalTrace, wifiPort: Int, cellularPort: Int, dictionaryBytes: Int, level: Int
    ) throws -> GatewayConfig {
        let tables = trace.tables.map { table in
            table.tomlBlock + "download = { period = \"24h\" }\n"
        }
        return try GatewayConfig.parse(
            text: """
                \(preamble(directory))
                [network]
                classes = ["wifi", "cellular"]
                [cloud]
                url = "http://127.0.0.1:\(wifiPort)"
                gateway_id = "\(edge)"
                secret = "\(secret)\(edge)"
                level = \(level)
                dictionary_bytes = \(dictionaryBytes)
                notify_networks = []
                retry_min = "1s"
                retry_max = "10s"
                [[uplinks]]
                name = "wifi"
                class = "wifi"
                url = "http://127.0.0.1:\(wifiPort)"
                probe_interval = "off"
                [[uplinks]]
                name = "cellular"
                class = "cellular"
                url = "http://127.0.0.1:\(cellularPort)"
                probe_interval = "off"
                [[clients]]
                name = "devices"
                token = "\(clientToken)"
                read = ["*"]
                write = ["*"]
                \(tables.joined(separator: "\n"))
                """,
            file: "<frugal gateway>")
    }

    /// What both configurations start with: loopback on a free port, quiet logs, an fsync per
    /// commit spared (the benchmark counts bytes, not durability).
    private static func preamble(_ directory: String) -> String {
        """
        [server]
        host = "127.0.0.1"
        port = 0
        data_dir = "\(directory)"
        log_level = "error"
        [store]
        synchronous = "normal"
        [admin]
        token = "\(adminToken)"
        """
    }

    static func basicAuthorization(_ gateway: String) -> String {
        "Basic " + Data("\(gateway):\(secret)\(gateway)".utf8).base64EncodedString()
    }
}

/// A cloud on a free loopback port with two counting relays in front of it, `wifi` and
/// `cellular`: whatever reaches the cloud through them is counted at the socket.
struct FrugalCloud {
    let cloud: Cloud<ContinuousClock>
    let services: BenchServices
    let wifi: CountingRelay
    let cellular: CountingRelay
    let wifiPort: Int
    let cellularPort: Int

    static func start(directory: String, trace: FrugalTrace, now: @escaping @Sendable () -> Int64) async throws
        -> FrugalCloud
    {
        let cloud = try Cloud(config: try FrugalSetup.cloud(directory: directory, trace: trace), logger: Logger(label: "frugal.cloud"))
        let services: BenchServices
        do {
            services = try await BenchServices.start(servers: 1) { report in
                cloud.services(port: 0) { port in await report(0, port) }
            }
        } catch {
            try? cloud.store.close()
            throw error
        }
        let wifi = CountingRelay(name: "wifi", now: now)
        let cellular = CountingRelay(name: "cellular", now: now)
        let ports: (Int, Int)
        do {
            ports = (
                try await wifi.start(upstreamHost: "127.0.0.1", upstreamPort: services.ports[0]),
                try await cellular.start(upstreamHost: "127.0.0.1", upstreamPort: services.ports[0])
            )
        } catch {
            try? await services.stop()
            try? cloud.store.close()
            throw error
        }
        return FrugalCloud(
            cloud: cloud, services: services, wifi: wifi, cellular: cellular, wifiPort: ports.0, cellularPort: ports.1)
    }

    func relay(_ networkClass: String) -> CountingRelay { networkClass == "wifi" ? wifi : cellular }

    func stop() async throws {
        try? await wifi.stop()
        try? await cellular.stop()
        try await services.stop()
        try cloud.store.close()
    }
}
