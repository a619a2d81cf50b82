import ArgumentParser
import DallyCloud
import DallyConfig
import DallyGateway
import DallyLogging
import Foundation
import Logging
import ServiceLifecycle

/// `dally dev`: a cloud and two gateways on loopback in one process, from the default
/// configurations, for trying Dally out.
///
/// Gateway 1 runs exactly as `dally gateway` would with the gateway file. Gateway n (n ≥ 2)
/// listens on the gateway port + n − 1, keeps its replica in `<data_dir>-<n>`, and signs in
/// with the cloud file's n-th `[[gateways]]` entry. Every gateway syncs with this cloud.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run a cloud and two gateways on loopback, for trying Dally out."
    )

    @Option(name: .long, help: "Path of the cloud's TOML configuration.")
    var cloudConfig: String = "config/cloud.toml"

    @Option(name: .long, help: "Path of the gateways' TOML configuration.")
    var gatewayConfig: String = "config/gateway.toml"

    @Option(name: .long, help: "How many gateways to run (at most one per [[gateways]] entry of the cloud file).")
    var gateways: Int = 2

    func run() async throws {
        let cloudSettings = try Startup.load { () throws(ConfigError) in try CloudConfig.load(path: cloudConfig) }
        let gatewaySettings = try Startup.load { () throws(ConfigError) in try GatewayConfig.load(path: gatewayConfig) }
        guard (1...cloudSettings.gateways.count).contains(gateways) else {
            StandardError.line(
                "dally: --gateways must be 1 to \(cloudSettings.gateways.count) (the cloud file's [[gateways]])")
            throw ExitCode(2)
        }
        Startup.bootstrapLogging(gatewaySettings.server)
        let cloudLogger = Logger(label: "dally.cloud")
        let cloud = try Startup.open("the cloud store", in: cloudSettings.server.dataDirectory, replica: false) { try Cloud(config: cloudSettings, logger: cloudLogger) }
        var services: [any Service] = cloud.services { port in
            cloudLogger.info("cloud listening", metadata: ["address": "\(cloudSettings.server.host):\(port)"])
        }
        var running: [Gateway] = []
        var addresses = ["\(cloudSettings.server.host):\(cloudSettings.server.port)"]
        for n in 0..<gateways {
            let settings = Self.gateway(n, of: gatewaySettings, cloud: cloudSettings)
            let gateway = try Startup.open("the replica of gateway \(n + 1)", in: settings.server.dataDirectory, replica: true) {
                try Gateway(config: settings, logger: Logger(label: "dally.\(settings.cloud?.gatewayID ?? "gateway")"))
            }
            services += gateway.services(onServerRunning: gateway.announce)
            addresses.append("\(settings.server.host):\(settings.server.port)")
            running.append(gateway)
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: cloudLogger))
        try await Startup.serve(on: "one of " + addresses.joined(separator: ", ")) { try await group.run() }
        for gateway in running { try gateway.close() }
        try cloud.store.close()
        cloudLogger.info("dev stopped", metadata: ["reason": "shutdown signal (SIGTERM or SIGINT)"])
    }

    /// The configuration of the n-th gateway (from 0).
    static func gateway(_ n: Int, of base: GatewayConfig, cloud: CloudConfig) -> GatewayConfig {
        var settings = base
        let credential = cloud.gateways[n]
        var link = base.cloud ?? CloudLink(url: "", gatewayID: credential.id, secret: credential.secret)
        link.url = "http://\(cloud.server.host == "0.0.0.0" ? "127.0.0.1" : cloud.server.host):\(cloud.server.port)"
        if n > 0 {
            settings.server.port = base.server.port + n
            settings.server.dataDirectory = base.server.dataDirectory + "-\(n + 1)"
            link.gatewayID = credential.id
            link.secret = credential.secret
        }
        settings.cloud = link
        // Uplinks that went to the file's cloud go to this one.
        for i in settings.uplinks.indices where settings.uplinks[i].url == base.cloud?.url {
            settings.uplinks[i].url = link.url
        }
        if settings.uplinks.isEmpty {
            settings.uplinks = [UplinkConfig.implicit(cheapestClass: settings.networkClasses[0], url: link.url)]
        }
        return settings
    }
}
