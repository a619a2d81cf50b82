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

    /// A port out of range was taken modulo 65,536 by the socket layer: `--port 99999` listened
    /// on 34463.
    func validate() throws {
        if let port, !(0...65_535).contains(port) { throw ValidationError("--port must be 0 to 65535, got \(port)") }
        if let host, host.isEmpty { throw ValidationError("--host must name an address, e.g. 127.0.0.1 or 0.0.0.0") }
        if let dataDir, dataDir.isEmpty { throw ValidationError("--data-dir must name a directory") }
    }

    func apply(to server: inout ServerSettings) {
        if let host { server.host = host }
        if let port { server.port = port }
        if let dataDir { server.dataDirectory = dataDir }
    }
}
