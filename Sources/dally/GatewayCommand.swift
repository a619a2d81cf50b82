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

    @Option(name: .long, help: "Listen on this port instead of the configured one (0: any free port).")
    var port: Int?

    @Option(name: .long, help: "Use this data directory instead of the configured one.")
    var dataDir: String?

    @Flag(name: .long, help: "Check the configuration and exit.")
    var check = false

    func run() async throws {
        var settings: GatewayConfig
        do {
            settings = try GatewayConfig.load(path: config)
        } catch {
            FileHandle.standardError.write(Data("dally: configuration refused: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if let port { settings.server.port = port }
        if let dataDir { settings.server.dataDirectory = dataDir }
        if check {
            print("\(config): OK (\(settings.tables.count) tables, \(settings.clients.count) client tokens)")
            return
        }
        let level = Logger.Level(rawValue: settings.server.logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "dally.gateway")
        let gateway: Gateway
        do {
            gateway = try Gateway(config: settings, logger: logger)
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("dally: cannot open the replica: \(error)\n".utf8))
            throw ExitCode(3)
        }
        try await gateway.run()
    }
}
