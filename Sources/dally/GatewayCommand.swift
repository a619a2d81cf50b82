import ArgumentParser
import DallyConfig
import DallyGateway
import DallyStore
import Foundation
import Logging

/// `dally gateway --config FILE`: serves the local API until SIGTERM or SIGINT.
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Run the gateway: local HTTP API, SQLite replica, long-poll fan-out."
    )

    @Option(name: .long, help: "Path of the gateway's TOML configuration.")
    var config: String = "config/gateway.toml"

    @OptionGroup var overrides: ServerOverrides

    func run() async throws {
        var settings = try Startup.load { () throws(ConfigError) in try GatewayConfig.load(path: config) }
        overrides.apply(to: &settings.server)
        if overrides.check {
            print("\(config): OK (\(settings.tables.count) tables, \(settings.clients.count) client tokens)")
            return
        }
        Startup.bootstrapLogging(settings.server)
        let gateway = try Startup.open("the replica", in: settings.server.dataDirectory, replica: true) {
            try Gateway(config: settings, logger: Logger(label: "dally.gateway"))
        }
        try await Startup.serve(on: "\(settings.server.host):\(settings.server.port)") { try await gateway.run() }
    }
}
