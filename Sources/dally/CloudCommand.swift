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
        Startup.bootstrapLogging(level: settings.server.logLevel)
        let cloud = try Startup.open("the cloud store") {
            try Cloud(config: settings, logger: Logger(label: "dally.cloud"))
        }
        try await cloud.run()
    }
}

/// The options every server command takes besides its configuration file.
struct ServerOverrides: ParsableArguments {
    @Option(name: .long, help: "Listen on this port instead of the configured one (0: any free port).")
    var port: Int?

    @Option(name: .long, help: "Use this data directory instead of the configured one.")
    var dataDir: String?

    @Flag(name: .long, help: "Check the configuration and exit.")
    var check = false

    func apply(to server: inout ServerSettings) {
        if let port { server.port = port }
        if let dataDir { server.dataDirectory = dataDir }
    }
}

/// What every command does at start: read a configuration (exit 2 if refused), set up
/// logging, open a store (exit 3 if it cannot be opened).
enum Startup {
    static func load<T>(_ read: () throws(ConfigError) -> T) throws -> T {
        do {
            return try read()
        } catch {
            FileHandle.standardError.write(Data("dally: configuration refused: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    static func bootstrapLogging(level: String) {
        let level = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }

    static func open<T>(_ what: String, _ make: () throws -> T) throws -> T {
        do {
            return try make()
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("dally: cannot open \(what): \(error)\n".utf8))
            throw ExitCode(3)
        }
    }
}
