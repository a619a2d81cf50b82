import ArgumentParser
import DallyCloud
import DallyConfig
import DallyStore
import Foundation
import Logging

/// `dally cloud --config FILE`: serves the primary copy to gateways until SIGTERM or SIGINT.
struct CloudCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloud",
        abstract: "Run the cloud: primary copy, versions, idempotent batches, downstream changes, notify."
    )

    @Option(name: .long, help: "Path of the cloud's TOML configuration.")
    var config: String = "config/cloud.toml"

    @OptionGroup var overrides: ServerOverrides

    func run() async throws {
        var settings = try Startup.load { () throws(ConfigError) in try CloudConfig.load(path: config) }
        overrides.apply(to: &settings.server)
        if overrides.check {
            print("\(config): OK (\(settings.tables.count) tables, \(settings.gateways.count) gateways)")
            return
        }
        Startup.bootstrapLogging(settings.server)
        let cloud = try await Startup.open("the cloud store", in: settings.server.dataDirectory, replica: false) {
            try await Cloud<ContinuousClock>.open(config: settings, logger: Logger(label: "dally.cloud"))
        }
        try await Startup.serve(on: "\(settings.server.host):\(settings.server.port)") { try await cloud.run() }
    }
}
