import ArgumentParser
import DallyCloud
import DallyConfig
import DallyStore
import Foundation
import Logging

/// The options every server command takes besides its configuration file.
struct ServerOverrides: ParsableArguments {
    @Option(name: .long, help: "Listen on this address instead of the configured one (0.0.0.0: every interface).")
    var host: String?

    @Option(name: .long, help: "Listen on this port instead of the configured one (0: any free port).")
    var port: Int?

    @Option(name: .long, help: "Use this data directory instead of the configured one.")
    var dataDir: String?

    @Flag(name: .long, help: "Check the configuration and exit.")
    var check = false

    func apply(to server: inout ServerSettings) {
        if let host { server.host = host }
        if let port { server.port = port }
        if let dataDir { server.dataDirectory = dataDir }
    }
}
